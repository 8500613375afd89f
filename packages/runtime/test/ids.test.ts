import fc from 'fast-check';
import { expect, test } from 'vitest';
import { CallIdGenerator, timestampPrefix } from '../src/ids.js';

test('call ids are RFC 9562 UUIDv7 strings, unique and in creation order', () => {
  const ids = new CallIdGenerator();
  const made = Array.from({ length: 20_000 }, () => ids.next());
  for (const id of made.slice(0, 100))
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(new Set(made).size).toBe(made.length);
  expect([...made].sort()).toEqual(made);
});

test('two generators never collide', () => {
  const a = new CallIdGenerator();
  const b = new CallIdGenerator();
  const seen = new Set<string>();
  for (let i = 0; i < 5_000; i++) {
    seen.add(a.next());
    seen.add(b.next());
  }
  expect(seen.size).toBe(10_000);
});

test('an id starts with its 48-bit millisecond timestamp in hex, then the version digit 7', () => {
  expect(new CallIdGenerator().next(0x0123_4567_89ab)).toMatch(/^01234567-89ab-7/);
  expect(new CallIdGenerator().next(Date.UTC(2026, 11, 2))).toMatch(/^01a2340d-0c00-7/);
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 2 ** 48 - 1 }), (ms) => {
      const hex = ms.toString(16).padStart(12, '0');
      expect(timestampPrefix(ms)).toBe(`${hex.slice(0, 8)}-${hex.slice(8)}-7`);
    }),
    { numRuns: 1000 },
  );
});

test('a clock before 1970 or not a number still gives well-formed, unique, ordered ids', () => {
  const ids = new CallIdGenerator();
  const made = [ids.next(-5), ids.next(Number.NaN), ids.next(-Infinity), ids.next(3)];
  for (const id of made)
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(made[0]).toMatch(/^00000000-0000-7000-/);
  expect(new Set(made).size).toBe(made.length);
  expect([...made].sort()).toEqual(made);
});
