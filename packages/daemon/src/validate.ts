import { describeValue } from '@sluice/protocol';
/**
 * The daemon's checks of configured numbers: each throws a `RangeError` naming the value and
 * the rule it broke, the way every limit is validated once where it enters (docs/architecture.md).
 */

/** An integer > 0. */
export function positiveInteger(name: string, value: number): number {
  if (Number.isSafeInteger(value) && value > 0) return value;
  throw new RangeError(`${name} must be a positive integer, got ${describeValue(value)}`);
}

/** An integer >= 0. */
export function nonNegativeInteger(name: string, value: number): number {
  if (Number.isSafeInteger(value) && value >= 0) return value;
  throw new RangeError(`${name} must be a non-negative integer, got ${describeValue(value)}`);
}

/** An integer > 0, or `Infinity` for unlimited. */
export function positiveIntegerOrInfinity(name: string, value: number): number {
  if (value === Infinity || (Number.isSafeInteger(value) && value > 0)) return value;
  throw new RangeError(`${name} must be a positive integer or Infinity, got ${describeValue(value)}`);
}

/** An integer in `[min, max]`. */
export function integerInRange(name: string, value: number, min: number, max: number): number {
  if (Number.isSafeInteger(value) && value >= min && value <= max) return value;
  throw new RangeError(`${name} must be an integer in [${min}, ${max}], got ${describeValue(value)}`);
}
