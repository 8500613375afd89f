import type {
  GenerationRequest,
  ModelProvider,
  ModelResponse,
  ModelStreamEvent,
  ProviderCallOptions,
} from '../../src/types.js';

/** One call a {@link ScriptedProvider} received, which the test then answers. */
export class ScriptedCall {
  readonly events: ModelStreamEvent[] = [];
  settled = false;
  private read = 0;
  private resolveComplete?: (r: ModelResponse) => void;
  private rejectComplete?: (e: unknown) => void;
  private wake?: () => void;
  private failure: unknown;

  constructor(
    readonly kind: 'complete' | 'stream',
    readonly request: GenerationRequest,
    readonly options: ProviderCallOptions,
    ignoreAbort: boolean,
  ) {
    if (!ignoreAbort) {
      options.signal.addEventListener('abort', () => this.fail(options.signal.reason), { once: true });
    }
  }

  /** Answers with `text` (complete) or sends `finished` (stream). */
  succeed(text = 'ok'): void {
    const usage = { inputTokens: 3, outputTokens: text.split(/\s+/).length };
    if (this.kind === 'complete') this.resolveComplete?.({ text, stopReason: 'end_turn', usage });
    else this.push({ type: 'finished', stopReason: 'end_turn', usage });
    this.settled = true;
  }

  /** Fails the call with `error`. */
  fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.failure = error ?? new Error('provider failed');
    this.rejectComplete?.(this.failure);
    this.wake?.();
  }

  /** Streams one delta. */
  delta(text: string): void {
    this.push({ type: 'delta', text });
  }

  /** @internal */
  completion(): Promise<ModelResponse> {
    return new Promise((resolve, reject) => {
      this.resolveComplete = resolve;
      this.rejectComplete = reject;
      if (this.failure !== undefined) reject(this.failure);
    });
  }

  /** @internal */
  async *iterate(): AsyncGenerator<ModelStreamEvent> {
    for (;;) {
      const event = this.events[this.read];
      if (event) this.read++;
      if (event) {
        yield event;
        if (event.type === 'finished') return;
        continue;
      }
      if (this.failure !== undefined) throw this.failure;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private push(event: ModelStreamEvent): void {
    this.events.push(event);
    this.wake?.();
  }
}

/**
 * A provider driven step by step by the test — the plugin boundary the scheduler talks to,
 * so tests can place provider answers, failures and hangs exactly where they want them.
 */
export class ScriptedProvider implements ModelProvider {
  readonly name = 'scripted';
  readonly defaultModel = 'scripted-1';
  readonly calls: ScriptedCall[] = [];
  /** When true, new calls ignore their abort signal (a hung plugin). */
  ignoreAbort = false;

  complete(request: GenerationRequest, options: ProviderCallOptions): Promise<ModelResponse> {
    const call = new ScriptedCall('complete', request, options, this.ignoreAbort);
    this.calls.push(call);
    return call.completion();
  }

  stream(request: GenerationRequest, options: ProviderCallOptions): AsyncIterable<ModelStreamEvent> {
    const call = new ScriptedCall('stream', request, options, this.ignoreAbort);
    this.calls.push(call);
    return call.iterate();
  }

  /** The most recent call; throws if there is none. */
  last(): ScriptedCall {
    const call = this.calls.at(-1);
    if (!call) throw new Error('no provider call was made');
    return call;
  }
}

/** Lets promise chains run: waits one macrotask. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
