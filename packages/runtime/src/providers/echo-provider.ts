import { systemClock, type Clock } from '../clock.js';
import { nonNegativeFiniteNumber, nonNegativeInteger, positiveInteger } from '../validate.js';
import {
  contentText,
  type ChatMessage,
  type GenerationRequest,
  type GenerationStopReason,
  type ModelProvider,
  type ModelResponse,
  type ModelStreamEvent,
  type ProviderCallOptions,
  type Usage,
} from '../types.js';

/** Options of {@link EchoProvider}; every delay runs on the injected clock. */
export interface EchoProviderOptions {
  /** Delay before the answer (or the first delta) in ms; default 0. */
  latencyMs?: number;
  /** Delay between two stream deltas in ms; default 0. */
  chunkDelayMs?: number;
  /** Characters per stream delta; default 16. */
  chunkSize?: number;
  /** Clock for the delays; default the system clock. Tests pass a fake clock. */
  clock?: Clock;
}

/**
 * Approximate token count used by the echo model: the number of whitespace-separated words.
 * Deterministic and cheap, which is all an offline model needs.
 */
export function estimateTokens(text: string): number {
  let count = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const space = isWhitespace(text.charCodeAt(i));
    if (!space && !inWord) count++;
    inWord = !space;
  }
  return count;
}

/** Whether `c` is a character that the `\s` of a JavaScript regular expression matches. */
function isWhitespace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

const WORD = /\S+/g;

/**
 * The built-in offline model: answers `Echo: <last user message>` (its text parts, for content
 * parts) deterministically, with
 * optional simulated latency. Used by the default configuration, demos, tests and benchmarks;
 * with no latency and no chunk delay it schedules no timers at all.
 */
export class EchoProvider implements ModelProvider {
  readonly name = 'echo';
  readonly defaultModel = 'echo-1';
  private readonly latencyMs: number;
  private readonly chunkDelayMs: number;
  private readonly chunkSize: number;
  private readonly clock: Clock;

  constructor(options: EchoProviderOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.latencyMs = delayOption('latencyMs', options.latencyMs ?? 0, this.clock.maxTimerMs);
    this.chunkDelayMs = delayOption('chunkDelayMs', options.chunkDelayMs ?? 0, this.clock.maxTimerMs);
    this.chunkSize = positiveInteger('chunkSize', options.chunkSize ?? 16);
  }

  /**
   * Waits `latencyMs`, then returns the whole answer; rejects with `signal.reason` on abort.
   * Without latency it answers at once and never reads the signal, so a call costs no AbortSignal.
   */
  async complete(request: GenerationRequest, options: ProviderCallOptions): Promise<ModelResponse> {
    const response = answer(request);
    if (this.latencyMs > 0) {
      options.signal.throwIfAborted();
      await sleep(this.clock, this.latencyMs, options.signal);
    }
    return response;
  }

  /**
   * Waits `latencyMs`, then yields `chunkSize`-character deltas `chunkDelayMs` apart and one
   * `finished`; throws `signal.reason` on abort.
   */
  async *stream(request: GenerationRequest, options: ProviderCallOptions): AsyncGenerator<ModelStreamEvent> {
    const { signal } = options;
    signal.throwIfAborted();
    const { text, stopReason, usage } = answer(request);
    if (this.latencyMs > 0) await sleep(this.clock, this.latencyMs, signal);
    let start = 0;
    while (start < text.length) {
      if (start > 0 && this.chunkDelayMs > 0) await sleep(this.clock, this.chunkDelayMs, signal);
      signal.throwIfAborted();
      const end = chunkEnd(text, start, this.chunkSize);
      yield { type: 'delta', text: text.slice(start, end) };
      start = end;
    }
    signal.throwIfAborted();
    yield { type: 'finished', stopReason, usage };
  }
}

function answer(request: GenerationRequest): ModelResponse {
  const maxOutputTokens = request.maxOutputTokens;
  if (maxOutputTokens !== undefined) nonNegativeInteger('maxOutputTokens', maxOutputTokens);
  const full = `Echo: ${lastUserText(request.messages)}`;
  const fullTokens = estimateTokens(full);
  const truncated = maxOutputTokens !== undefined && fullTokens > maxOutputTokens;
  const text = truncated ? firstWords(full, maxOutputTokens) : full;
  const stopReason: GenerationStopReason = truncated ? 'max_tokens' : 'end_turn';
  const usage: Usage = {
    inputTokens: request.messages.reduce(
      (sum, message) => sum + estimateTokens(contentText(message.content)),
      0,
    ),
    outputTokens: truncated ? maxOutputTokens : fullTokens,
  };
  return { text, stopReason, usage };
}

function lastUserText(messages: readonly ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === 'user') return contentText(message.content);
  }
  return '';
}

/** The prefix of `text` ending with its `count`-th word (original spacing kept). */
function firstWords(text: string, count: number): string {
  if (count === 0) return '';
  let seen = 0;
  for (const match of text.matchAll(WORD)) {
    if (++seen === count) return text.slice(0, match.index + match[0].length);
  }
  return text;
}

/** End of the delta starting at `start`, never splitting a surrogate pair. */
function chunkEnd(text: string, start: number, size: number): number {
  let end = Math.min(text.length, start + size);
  const code = text.charCodeAt(end);
  if (end < text.length && code >= 0xdc00 && code <= 0xdfff) end = end - 1 > start ? end - 1 : end + 1;
  return end;
}

/** Resolves after `ms` on `clock`; on abort clears the timer and rejects with `signal.reason`. */
function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clock.clearTimer(handle);
      reject(signal.reason);
    };
    const handle = clock.setTimer(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function delayOption(name: string, value: number, maxTimerMs: number): number {
  nonNegativeFiniteNumber(name, value);
  if (value > maxTimerMs) throw new RangeError(`${name} must be at most ${maxTimerMs} ms, got ${value}`);
  return value;
}
