import { sleep } from './abort.js';
import { cappedRetryDelay } from './backoff.js';
import { DEFAULT_RETRY } from './defaults.js';
import { nonNegativeInteger, positiveNumber } from './validate.js';

/** Options of {@link withRetry}. */
export interface RetryOptions {
  /** Retries after the first attempt; default 3. */
  retries?: number;
  /** First backoff ceiling in ms; default 250. */
  baseMs?: number;
  /** No wait is longer than this; default 10 000. */
  capMs?: number;
  /** Stops waiting and retrying; the pending wait rejects with the abort reason. */
  signal?: AbortSignal;
  /** Decides whether an error is worth another attempt; default: `error.retryable === true`. */
  shouldRetry?: (error: unknown) => boolean;
  /** Source of randomness in [0, 1) for the jitter; default `Math.random`. */
  random?: () => number;
}

function isRetryable(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { retryable?: unknown }).retryable === true;
}

function retryAfterOf(error: unknown): number | undefined {
  const value =
    typeof error === 'object' && error !== null
      ? (error as { retryAfterMs?: unknown }).retryAfterMs
      : undefined;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/**
 * Runs `fn` (given the 0-based attempt) again while it fails with a retryable error, waiting
 * the server's `Retry-After` plus jitter so refused callers spread out; a `Retry-After` beyond
 * `capMs` rethrows instead of retrying early.
 */
export async function withRetry<T>(
  fn: (attempt: number) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const retries = nonNegativeInteger('retries', options.retries ?? DEFAULT_RETRY.retries);
  const baseMs = positiveNumber('baseMs', options.baseMs ?? DEFAULT_RETRY.baseMs);
  const capMs = positiveNumber('capMs', options.capMs ?? DEFAULT_RETRY.capMs);
  const shouldRetry = options.shouldRetry ?? isRetryable;
  for (let attempt = 0; ; attempt++) {
    options.signal?.throwIfAborted();
    try {
      return await fn(attempt);
    } catch (error) {
      if (attempt >= retries || !shouldRetry(error) || options.signal?.aborted) throw error;
      const retryAfter = retryAfterOf(error);
      if (retryAfter !== undefined && retryAfter > capMs) throw error;
      const delay = cappedRetryDelay(attempt, retryAfter ?? 0, {
        baseMs,
        capMs,
        ...(options.random ? { random: options.random } : {}),
      });
      await sleep(delay, options.signal);
    }
  }
}
