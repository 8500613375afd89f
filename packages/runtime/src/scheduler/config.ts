import type { ModelLimits } from '@sluice/protocol';
import type { Clock } from '../clock.js';
import { nonNegativeInteger, positiveFiniteNumber, positiveInteger } from '../validate.js';

/** Limits of the model scheduler (SPEC SCH-3); every field has the documented default. */
export interface SchedulerConfig {
  /** Execution slots held at once, covering request recording/preflight and provider execution. */
  maxConcurrency?: number;
  /** Jobs waiting for a slot; `0` refuses a call that finds no free slot. */
  maxQueued?: number;
  /** Accepted jobs not yet fully recorded and cleaned up; ≥ maxConcurrency. */
  maxInflight?: number;
  /** JSON bytes of the request plus its effective options. */
  maxRequestBytes?: number;
  /** Timeout of a call that gives none; an explicit call timeout can only tighten it. */
  defaultTimeoutMs?: number;
  /**
   * Calls of accepted prompts that may wait, in arrival order, for room when the queue or the
   * in-flight cap is full (docs/decisions/029); `0` refuses them as any other call.
   */
  maxWaiting?: number;
}

/** Default of {@link SchedulerConfig.maxWaiting}: twice the daemon's default session cap. */
export const DEFAULT_MAX_WAITING = 256;

/** The bound of the scheduler's waiters (SchedulerConfig.maxWaiting), validated. */
export function resolveMaxWaiting(config: SchedulerConfig): number {
  return nonNegativeInteger('maxWaiting', config.maxWaiting ?? DEFAULT_MAX_WAITING);
}

/** The defaults of SCH-3. */
export const DEFAULT_SCHEDULER_LIMITS: Readonly<ModelLimits> = Object.freeze({
  maxConcurrency: 4,
  maxQueued: 32,
  maxInflight: 64,
  maxRequestBytes: 8 * 1024 * 1024,
  defaultTimeoutMs: 600_000,
});

/**
 * Applies defaults and validates a scheduler configuration (SCH-4, SCH-7); throws a
 * RangeError naming the offending value, so an invalid runtime is never constructed.
 */
export function resolveSchedulerConfig(config: SchedulerConfig, clock: Clock): ModelLimits {
  const d = DEFAULT_SCHEDULER_LIMITS;
  const maxConcurrency = positiveInteger('maxConcurrency', config.maxConcurrency ?? d.maxConcurrency);
  const maxQueued = nonNegativeInteger('maxQueued', config.maxQueued ?? d.maxQueued);
  const maxInflight = positiveInteger('maxInflight', config.maxInflight ?? d.maxInflight);
  const maxRequestBytes = positiveInteger('maxRequestBytes', config.maxRequestBytes ?? d.maxRequestBytes);
  if (maxInflight < maxConcurrency) {
    throw new RangeError(
      `maxInflight must be at least maxConcurrency (${maxConcurrency}), got ${maxInflight}`,
    );
  }
  const defaultTimeoutMs = positiveFiniteNumber(
    'defaultTimeoutMs',
    config.defaultTimeoutMs ?? d.defaultTimeoutMs,
  );
  if (defaultTimeoutMs > clock.maxTimerMs) {
    throw new RangeError(
      `defaultTimeoutMs cannot be represented on the clock (at most ${clock.maxTimerMs} ms), got ${defaultTimeoutMs}`,
    );
  }
  return { maxConcurrency, maxQueued, maxInflight, maxRequestBytes, defaultTimeoutMs };
}
