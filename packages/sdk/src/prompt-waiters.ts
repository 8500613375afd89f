import type { PromptAccepted, PromptResult } from '@sluice/protocol';
import { abortReason } from './abort.js';
import { MAX_EARLY_TERMINAL_EVENTS } from './defaults.js';
import { DaemonPromptLostError } from './errors.js';
import type { DaemonEvent } from './events.js';
import { settleTerminal, terminalPromptId } from './turn.js';

interface Waiter {
  readonly accepted: PromptAccepted;
  readonly signal: AbortSignal | undefined;
  resolve(result: PromptResult): void;
  reject(error: unknown): void;
  detach(): void;
}

/** Waits for a prompt's end on a stream of its own. */
export type AwaitTurn = (accepted: PromptAccepted, signal: AbortSignal | undefined) => Promise<PromptResult>;

/**
 * The prompts of one session client that wait for their terminal event on its shared
 * `events()` stream, and the ends that arrived before their `202` was read (bounded).
 */
export class PromptWaiters {
  private readonly waiters = new Map<string, Waiter>();
  private readonly early = new Map<string, DaemonEvent>();

  constructor(private readonly sessionId: string) {}

  /** True while `promptId` waits here. */
  has(promptId: string): boolean {
    return this.waiters.has(promptId);
  }

  /** The terminal event of `promptId` that arrived before its waiter, taken out. */
  takeEarly(promptId: string): DaemonEvent | undefined {
    const early = this.early.get(promptId);
    if (early !== undefined) this.early.delete(promptId);
    return early;
  }

  /** Waits for the prompt's terminal event; an abort takes the prompt back, then rejects. */
  wait(
    accepted: PromptAccepted,
    signal: AbortSignal | undefined,
    takeBack: () => Promise<void>,
  ): Promise<PromptResult> {
    return new Promise<PromptResult>((resolve, reject) => {
      const onAbort = (): void => {
        waiter.detach();
        void takeBack().then(() => reject(abortReason(signal!)));
      };
      const waiter: Waiter = {
        accepted,
        signal,
        resolve,
        reject,
        detach: () => {
          this.waiters.delete(accepted.promptId);
          signal?.removeEventListener('abort', onAbort);
        },
      };
      this.waiters.set(accepted.promptId, waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Settles a terminal event's waiter; without one, keeps the event when `keep` (a POST is out). */
  dispatch(event: DaemonEvent, keep: boolean): void {
    const promptId = terminalPromptId(event);
    if (promptId === undefined) return;
    const waiter = this.waiters.get(promptId);
    if (waiter === undefined) {
      if (!keep) return;
      if (this.early.size >= MAX_EARLY_TERMINAL_EVENTS) {
        const oldest = this.early.keys().next();
        if (!oldest.done) this.early.delete(oldest.value);
      }
      this.early.set(promptId, event);
      return;
    }
    waiter.detach();
    try {
      waiter.resolve(settleTerminal(event));
    } catch (error) {
      waiter.reject(error);
    }
  }

  /** After a bus reset the replayed ring cannot hold the waiting prompts' ends: they are lost. */
  rejectLost(): void {
    for (const waiter of [...this.waiters.values()]) {
      waiter.detach();
      waiter.reject(new DaemonPromptLostError(this.sessionId, waiter.accepted.promptId));
    }
  }

  /** Moves every waiting prompt to `awaitTurn` (the shared stream closed). */
  handOff(awaitTurn: AwaitTurn): void {
    for (const waiter of [...this.waiters.values()]) {
      waiter.detach();
      awaitTurn(waiter.accepted, waiter.signal).then(waiter.resolve, waiter.reject);
    }
  }
}
