import { DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION, MAX_TIMER_MS, SSE_HEARTBEAT_MS } from '@sluice/protocol';
import type { ReconnectSettings } from './events.js';

// Every default and bound of the SDK, each defined here once.

/** Default per-call timeout of the short requests, in ms. */
export const DEFAULT_FETCH_TIMEOUT_MS = 30_000;

/** Local pending-prompt limit when the option is omitted: the daemon's default (SPEC BP-1). */
export { DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION };

/** First backoff ceiling of stream reconnects and of `withRetry`, in ms. */
export const DEFAULT_BACKOFF_BASE_MS = 250;

/** Defaults of `ReconnectOptions`. */
export const DEFAULT_RECONNECT: ReconnectSettings = {
  maxAttempts: 5,
  baseMs: DEFAULT_BACKOFF_BASE_MS,
  capMs: 5_000,
  // three of the daemon's heartbeats
  idleTimeoutMs: 3 * SSE_HEARTBEAT_MS,
};

/** Defaults of `withRetry`'s options. */
export const DEFAULT_RETRY = {
  retries: 3,
  baseMs: DEFAULT_BACKOFF_BASE_MS,
  capMs: 10_000,
} as const;

/**
 * Times a prompt POST is sent again, with the same `Idempotency-Key`, when its answer could not
 * be read (the connection failed): the daemon answers a retry with the first `202` and admits
 * nothing twice, so a retry is safe.
 */
export const PROMPT_POST_RETRIES = 2;
/** Wait before such a retry, in ms (doubling each time). */
export const PROMPT_POST_RETRY_BASE_MS = 100;

/** Terminal events kept for prompts whose `202` is still being read (bounded, oldest dropped). */
export const MAX_EARLY_TERMINAL_EVENTS = 256;

/** Largest partial frame the SSE reader buffers (characters); a stream without frame breaks is refused. */
export const DEFAULT_MAX_SSE_BUFFER = 8 * 1024 * 1024;

/** Largest delay a timer can wait, in ms (docs/decisions/013-sdk-timer-range.md). */
export { MAX_TIMER_MS };
