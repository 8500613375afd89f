import type { CallOptions, ModelStream } from '../gateway/model-gateway.js';
import type { GenerationRequest, ModelStreamEvent } from '../types.js';
import { mayFallBack } from './fallback-rule.js';
import type { CatalogueModel } from './catalogue-model.js';

/** A streamed call of a catalogue model: also names the model answering it. */
export interface CatalogueStream extends ModelStream {
  /** The catalogue name of the model whose attempt is (or was last) streaming. */
  readonly model: string;
}

/**
 * A streamed call that passes to the next model of its fallbacks when an attempt fails before
 * its first event (overload, `429`, `5xx`, unreachable: {@link mayFallBack}); once an event has
 * reached the consumer the call is that attempt's, and its failure is the call's. Each attempt
 * is a call of its model's runtime (its own slot, journal records and budget charge), the later
 * ones recorded as fallbacks of the first.
 */
export class FallbackStream implements CatalogueStream {
  readonly callId: string;
  private index: number;
  private current: ModelStream;
  private events: AsyncIterator<ModelStreamEvent>;
  private started = false;
  private cancelled = false;

  /** Opens the first attempt that admits the call; throws the last refusal synchronously. */
  constructor(
    private readonly chain: readonly CatalogueModel[],
    private readonly request: GenerationRequest,
    private readonly options: CallOptions,
  ) {
    this.index = -1;
    this.current = this.open(0, undefined);
    this.callId = this.current.callId;
    this.events = this.current[Symbol.asyncIterator]();
  }

  get model(): string {
    return this.chain[this.index]!.name;
  }

  cancel(): void {
    this.cancelled = true;
    this.current.cancel();
  }

  [Symbol.asyncIterator](): AsyncIterator<ModelStreamEvent> {
    return {
      next: () => this.next(),
      return: () => {
        this.cancelled = true;
        return this.events.return?.() ?? Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  private async next(): Promise<IteratorResult<ModelStreamEvent>> {
    for (;;) {
      try {
        const step = await this.events.next();
        this.started = true;
        return step;
      } catch (error) {
        if (!this.mayPass(error)) throw error;
        this.current = this.open(this.index + 1, this.callId);
        this.events = this.current[Symbol.asyncIterator]();
      }
    }
  }

  private mayPass(error: unknown): boolean {
    return (
      !this.started &&
      !this.cancelled &&
      this.options.signal?.aborted !== true &&
      this.index + 1 < this.chain.length &&
      mayFallBack(error)
    );
  }

  /** The first model from `from` on that admits the call (a refusal that may pass tries the next). */
  private open(from: number, firstCallId: string | undefined): ModelStream {
    for (let index = from; ; index++) {
      const options = firstCallId === undefined ? this.options : { ...this.options, fallbackOf: firstCallId };
      try {
        const stream = this.chain[index]!.runtime.stream(this.request, options);
        this.index = index;
        return stream;
      } catch (error) {
        if (index + 1 >= this.chain.length || !mayFallBack(error)) throw error;
      }
    }
  }
}
