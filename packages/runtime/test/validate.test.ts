import { describe, expect, test } from 'vitest';
import { EchoProvider } from '../src/providers/echo-provider.js';
import {
  nonNegativeFiniteNumber,
  nonNegativeInteger,
  positiveFiniteNumber,
  positiveInteger,
} from '../src/validate.js';

describe('validate', () => {
  test('each check returns the value it accepts', () => {
    expect(positiveInteger('n', 1)).toBe(1);
    expect(nonNegativeInteger('n', 0)).toBe(0);
    expect(positiveFiniteNumber('n', 0.5)).toBe(0.5);
    expect(nonNegativeFiniteNumber('n', 0)).toBe(0);
  });

  test('the message names the value and the rule it broke', () => {
    expect(() => positiveInteger('maxQueued', 0)).toThrow('maxQueued must be a positive integer, got 0');
    expect(() => nonNegativeInteger('maxCalls', -1)).toThrow(
      'maxCalls must be a non-negative integer, got -1',
    );
    expect(() => positiveFiniteNumber('t', Infinity)).toThrow(
      't must be a positive finite number, got Infinity',
    );
    expect(() => nonNegativeFiniteNumber('d', NaN)).toThrow(
      'd must be a non-negative finite number, got NaN',
    );
  });

  test('an integer past 2^53 - 1 is refused: it could not be counted exactly', () => {
    expect(() => positiveInteger('chunkSize', 2 ** 53)).toThrow(RangeError);
    expect(() => new EchoProvider({ chunkSize: 2 ** 53 })).toThrow(
      `chunkSize must be a positive integer, got ${2 ** 53}`,
    );
  });
});
