import { systemClock, type Clock } from '../clock.js';
import { OverloadedError } from '../errors.js';

/** Longest a caller waits for model capacity, in all, before the refusal stands. */
export const MAX_CAPACITY_WAIT_MS = 300_000;

/** Options of {@link retryOnCapacity}. */
export interface CapacityWaitOptions {
  /** Stops the waiting at once; the caller then sees its own abort from the next attempt. */
  signal: AbortSignal;
  /** Waiting in all before the last refusal stands; default {@link MAX_CAPACITY_WAIT_MS}. */
  maxWaitMs?: number;
  clock?: Clock;
}

/**
 * Runs `attempt` again while the scheduler refuses it for capacity ({@link OverloadedError}),
 * waiting the refusal's `retryAfterMs` (computed from the queue and recent service times) before
 * each new try, until it is admitted, `signal` aborts, or `maxWaitMs` of waiting has passed —
 * then the last refusal stands. Any other failure propagates at once. Why: a caller that already
 * holds an accepted prompt (a session's turn) should get the model when it frees, not a late
 * `model_overloaded` (issue 19 item 10, docs/decisions/018); the scheduler's own admission stays
 * synchronous and typed (SCH-14).
 */
export async function retryOnCapacity<T>(
  attempt: () => Promise<T>,
  options: CapacityWaitOptions,
): Promise<T> {
  const clock = options.clock ?? systemClock;
  const maxWaitMs = options.maxWaitMs ?? MAX_CAPACITY_WAIT_MS;
  if (!(Number.isSafeInteger(maxWaitMs) && maxWaitMs >= 0))
    throw new RangeError(`maxWaitMs must be a non-negative integer, got ${String(maxWaitMs)}`);
  let waited = 0;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof OverloadedError) || waited >= maxWaitMs || options.signal.aborted) throw error;
      const delay = Math.max(1, Math.min(error.retryAfterMs, maxWaitMs - waited));
      await abortableSleep(clock, delay, options.signal);
      waited += delay;
    }
  }
}

/** Resolves after `ms` on `clock`, or at once when `signal` aborts. */
function abortableSleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clock.clearTimer(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = clock.setTimer(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
