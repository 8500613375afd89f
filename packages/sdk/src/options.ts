import { MAX_TIMER_MS } from './abort.js';

/** Local pending-prompt limit when the option is omitted (SPEC BP-1's default). */
export const DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION = 5;

/**
 * Normalizes `maxPendingPromptsPerSession` (BP-13): the capability value passes straight
 * through, `null`, `0` and `Infinity` mean "no local limit" (returned as `Infinity`), and a
 * negative, fractional or non-number value is a `TypeError` naming it.
 */
export function normalizePendingPromptLimit(value: number | null | undefined): number {
  if (value === undefined) return DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION;
  if (value === null || value === 0 || value === Infinity) return Infinity;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw new TypeError(
      `maxPendingPromptsPerSession must be a non-negative integer, Infinity or null, got ${String(value)}`,
    );
  return value;
}

/** A non-negative duration in ms where `0` and `Infinity` mean "none"; `undefined` → `fallback`. */
export function optionalTimeoutMs(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (value === Infinity || value === 0) return 0;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw new TypeError(
      `${name} must be a non-negative number of milliseconds or Infinity, got ${String(value)}`,
    );
  return value;
}

/** A non-negative integer option. */
export function nonNegativeInteger(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw new TypeError(`${name} must be a non-negative integer, got ${String(value)}`);
  return value;
}

/** A positive finite number option. */
export function positiveNumber(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new TypeError(`${name} must be a positive finite number, got ${String(value)}`);
  return value;
}

/** A whole number of ms a timer can wait (0 … 2^31−1, about 24.8 days); `0` means none. */
export function timerMs(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_TIMER_MS)
    throw new TypeError(
      `${name} must be an integer number of milliseconds in [0, ${MAX_TIMER_MS}], got ${String(value)}`,
    );
  return value;
}
