import fc from 'fast-check';
import { expect, test } from 'vitest';
import { isoTimestamp } from '../src/timestamp.js';

test('record timestamps are exactly Date#toISOString, in any order of calls and years', () => {
  const instant = fc.oneof(
    fc.integer({ min: -62_198_755_200_000, max: 253_402_300_799_999 }), // years 0000–9999
    fc.integer({ min: -8_640_000_000_000_000, max: 8_640_000_000_000_000 }), // every Date
    fc.integer({ min: 1_790_000_000_000, max: 1_790_000_005_000 }), // many in the same seconds
  );
  fc.assert(
    fc.property(fc.array(instant, { minLength: 1, maxLength: 50 }), (instants) => {
      for (const ms of instants) expect(isoTimestamp(ms)).toBe(new Date(ms).toISOString());
    }),
    { numRuns: 300 },
  );
  expect(isoTimestamp(1_790_000_000_123.7)).toBe(new Date(1_790_000_000_123).toISOString());
});
