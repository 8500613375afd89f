import type { ModelStreamEvent } from '../types.js';
import { keepShape } from '../keep-shape.js';
import type { Job } from '../scheduler/job.js';

type Pull = { resolve: (r: IteratorResult<ModelStreamEvent>) => void; reject: (e: unknown) => void };

/**
 * A hand-off between the job driving a provider stream and the caller iterating it. Nothing is
 * buffered: the driver pulls the provider only when the consumer asks for the next event, so a
 * slow consumer slows the provider instead of growing memory (streaming backpressure, SCH-10).
 */
export class StreamChannel {
  private pull: Pull | undefined = undefined;
  private demandWaiter: (() => void) | undefined = undefined;
  private final: { event?: ModelStreamEvent; error?: unknown } | undefined = undefined;
  private done = false;

  /** Driver: waits until the consumer wants an event, or rejects when `job` is aborted. */
  demand(job: Job): Promise<void> {
    if (this.pull) return Promise.resolve();
    return job.race(
      new Promise<void>((resolve) => {
        this.demandWaiter = resolve;
      }),
    );
  }

  /** Driver: hands one event to the waiting consumer (call only after `demand` resolved). */
  deliver(event: ModelStreamEvent): void {
    const pull = this.pull;
    this.pull = undefined;
    pull?.resolve({ value: event, done: false });
  }

  /** Driver: the stream's end — a last event (`finished`) or an error, delivered once. */
  end(outcome: { event?: ModelStreamEvent; error?: unknown }): void {
    if (this.final || this.done) return;
    this.final = outcome;
    if (this.pull) this.flushFinal();
  }

  /** Consumer: the next event; at most one pull is outstanding. */
  next(): Promise<IteratorResult<ModelStreamEvent>> {
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    if (this.pull) return Promise.reject(new Error('a model stream allows one pending next() at a time'));
    return new Promise((resolve, reject) => {
      this.pull = { resolve, reject };
      if (this.final) return this.flushFinal();
      const waiter = this.demandWaiter;
      this.demandWaiter = undefined;
      waiter?.();
    });
  }

  /** Consumer went away; returns true if the stream had not ended yet. */
  close(): boolean {
    const wasOpen = !this.done && !this.final;
    this.done = true;
    // A next() still outstanding ends too, as an async generator's would: nothing settles it later.
    const pull = this.pull;
    this.pull = undefined;
    pull?.resolve({ value: undefined, done: true });
    return wasOpen;
  }

  private flushFinal(): void {
    const pull = this.pull;
    const final = this.final;
    if (!pull || !final) return;
    this.pull = undefined;
    if (final.event) {
      // The finished event first; the following next() reports the end.
      this.final = {};
      pull.resolve({ value: final.event, done: false });
      return;
    }
    this.done = true;
    if (final.error !== undefined) pull.reject(final.error);
    else pull.resolve({ value: undefined, done: true });
  }
}

// see docs/decisions/012-runtime-hot-path.md
keepShape(new StreamChannel());
