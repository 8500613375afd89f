/**
 * The runtime's checks of configured numbers: each throws a `RangeError` naming the value and
 * the rule it broke, so that every limit is validated once where it enters (docs/architecture.md).
 * Integers are safe integers: a count past 2^53 - 1 could no longer be counted exactly.
 */

/** A safe integer > 0. */
export function positiveInteger(name: string, value: number): number {
  if (Number.isSafeInteger(value) && value > 0) return value;
  throw new RangeError(`${name} must be a positive integer, got ${String(value)}`);
}

/** A safe integer >= 0. */
export function nonNegativeInteger(name: string, value: number): number {
  if (Number.isSafeInteger(value) && value >= 0) return value;
  throw new RangeError(`${name} must be a non-negative integer, got ${String(value)}`);
}

/** A finite number > 0. */
export function positiveFiniteNumber(name: string, value: number): number {
  if (typeof value === 'number' && value > 0 && Number.isFinite(value)) return value;
  throw new RangeError(`${name} must be a positive finite number, got ${String(value)}`);
}

/** A finite number >= 0. */
export function nonNegativeFiniteNumber(name: string, value: number): number {
  if (typeof value === 'number' && value >= 0 && Number.isFinite(value)) return value;
  throw new RangeError(`${name} must be a non-negative finite number, got ${String(value)}`);
}
