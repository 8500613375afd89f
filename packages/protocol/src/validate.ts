import { describeValue } from './describe-value.js';

/**
 * The one form of every check of a configured value, in every package: `<name> must be <rule>,
 * got <value>`, the value described safely ({@link describeValue}: bounded, any depth). Each
 * check returns the value it accepts, so that a constructor validates where a limit enters.
 * Integers are safe integers: a count past 2^53 - 1 could no longer be counted exactly.
 * Checks throw `RangeError` unless given another class (the SDK's options throw `TypeError`).
 */

/** The class of error a check throws. */
export type InvalidValueError = new (message: string) => Error;

/** The error of `value`, named `name`, that breaks `rule` (`a positive integer`). */
export function invalidValue(
  name: string,
  rule: string,
  value: unknown,
  ErrorClass: InvalidValueError = RangeError,
): Error {
  return new ErrorClass(`${name} must be ${rule}, got ${describeValue(value)}`);
}

/** A safe integer > 0. */
export function positiveInteger(name: string, value: number, ErrorClass?: InvalidValueError): number {
  if (Number.isSafeInteger(value) && value > 0) return value;
  throw invalidValue(name, 'a positive integer', value, ErrorClass);
}

/** A safe integer >= 0. */
export function nonNegativeInteger(name: string, value: number, ErrorClass?: InvalidValueError): number {
  if (Number.isSafeInteger(value) && value >= 0) return value;
  throw invalidValue(name, 'a non-negative integer', value, ErrorClass);
}

/** A safe integer > 0, or `Infinity` for unlimited. */
export function positiveIntegerOrInfinity(
  name: string,
  value: number,
  ErrorClass?: InvalidValueError,
): number {
  if (value === Infinity || (Number.isSafeInteger(value) && value > 0)) return value;
  throw invalidValue(name, 'a positive integer or Infinity', value, ErrorClass);
}

/** A safe integer in `[min, max]`. */
export function integerInRange(
  name: string,
  value: number,
  min: number,
  max: number,
  ErrorClass?: InvalidValueError,
): number {
  if (Number.isSafeInteger(value) && value >= min && value <= max) return value;
  throw invalidValue(name, `an integer in [${min}, ${max}]`, value, ErrorClass);
}

/** A finite number > 0. */
export function positiveFiniteNumber(name: string, value: number, ErrorClass?: InvalidValueError): number {
  if (typeof value === 'number' && value > 0 && Number.isFinite(value)) return value;
  throw invalidValue(name, 'a positive finite number', value, ErrorClass);
}

/** A finite number >= 0. */
export function nonNegativeFiniteNumber(name: string, value: number, ErrorClass?: InvalidValueError): number {
  if (typeof value === 'number' && value >= 0 && Number.isFinite(value)) return value;
  throw invalidValue(name, 'a non-negative finite number', value, ErrorClass);
}
