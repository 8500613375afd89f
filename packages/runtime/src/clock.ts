import { MAX_TIMER_MS } from '@sluice/protocol';
/** Opaque handle of a timer created by a {@link Clock}. */
export type TimerHandle = unknown;

/**
 * The one source of time of the runtime. Deadlines are computed from `now()` and enforced with
 * timers from the same clock, so tests drive them with a fake clock instead of sleeping.
 */
export interface Clock {
  /** Milliseconds on a monotonic scale; only differences are meaningful. */
  now(): number;
  setTimer(callback: () => void, delayMs: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
  /** The longest delay `setTimer` can represent; longer deadlines are not representable. */
  readonly maxTimerMs: number;
}

/** Node's timer limit: `setTimeout` fires at once for delays above 2^31-1 ms. */
export { MAX_TIMER_MS };

/** The real clock: `performance.now()` (monotonic) and Node timers. */
export const systemClock: Clock = {
  // Bound once: Node's `performance.now` checks its receiver on every call otherwise.
  now: performance.now.bind(performance),
  setTimer: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  maxTimerMs: MAX_TIMER_MS,
};
