/** Doublings after which the ceiling stops growing (`capMs` bounds it long before). */
const MAX_DOUBLINGS = 30;

/** Exponential backoff settings: `baseMs · 2^attempt`, never more than `capMs`. */
export interface BackoffOptions {
  baseMs: number;
  capMs: number;
  /** Source of randomness in [0, 1); defaults to `Math.random`. */
  random?: () => number;
}

/**
 * "Full jitter" delay before retry number `attempt` (0-based): uniform in
 * `[0, min(capMs, baseMs · 2^attempt)]`, so many clients that failed together spread out.
 */
export function jitteredBackoff(attempt: number, options: BackoffOptions): number {
  const ceiling = Math.min(options.capMs, options.baseMs * 2 ** Math.min(attempt, MAX_DOUBLINGS));
  return Math.floor((options.random ?? Math.random)() * ceiling);
}

/**
 * Wait before retry `attempt` when the server asked for `retryAfterMs`: never sooner than that,
 * plus a full-jitter backoff on top (clients refused together must not all return at the same
 * instant), within `capMs` overall. `retryAfterMs` above `capMs` is the caller's to refuse.
 */
export function cappedRetryDelay(attempt: number, retryAfterMs: number, options: BackoffOptions): number {
  const floor = Math.min(Math.max(0, retryAfterMs), options.capMs);
  return floor + jitteredBackoff(attempt, { ...options, capMs: options.capMs - floor });
}
