import { describe, expect, test } from 'vitest';
import {
  integerInRange,
  invalidValue,
  nonNegativeInteger,
  positiveInteger,
  positiveIntegerOrInfinity,
} from '../src/validate.js';

describe('the one validation module', () => {
  test('every message is "<name> must be <rule>, got <value>", the value described safely', () => {
    expect(() => positiveInteger('maxQueued', 0)).toThrow('maxQueued must be a positive integer, got 0');
    expect(() => integerInRange('size', 1001, 1, 1000)).toThrow(
      'size must be an integer in [1, 1000], got 1001',
    );
    expect(() => positiveIntegerOrInfinity('max', -Infinity)).toThrow(
      'max must be a positive integer or Infinity, got -Infinity',
    );
    const long = 'x'.repeat(10_000);
    expect(invalidValue('name', 'short', long).message.length).toBeLessThan(300);
  });

  test('a check throws RangeError unless the caller names another class (the SDK: TypeError)', () => {
    expect(() => nonNegativeInteger('n', -1)).toThrow(RangeError);
    expect(() => nonNegativeInteger('n', -1, TypeError)).toThrow(
      new TypeError('n must be a non-negative integer, got -1'),
    );
    expect(positiveIntegerOrInfinity('n', Infinity)).toBe(Infinity);
  });
});
