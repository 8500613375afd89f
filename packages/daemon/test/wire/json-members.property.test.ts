import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { topLevelMembers } from '../../src/wire/index.js';

/** The deepest nesting of objects and arrays in `value` (0 for a scalar). */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

/** JSON text of `value` with random whitespace between tokens, as other encoders write it. */
const spaced = (value: unknown, indent: number): string => JSON.stringify(value, null, indent);

const members = fc.dictionary(
  fc.oneof(fc.constantFrom('tools', 'functions', 'messages', 'x'), fc.string({ unit: 'binary' })),
  fc.jsonValue({ depthSize: 'small', stringUnit: 'binary' }),
);

describe('the spans of a JSON object’s top-level members hold exactly their values', () => {
  test('each wanted member’s bytes parse to the value JSON.parse gives it, at the depth it nests', () => {
    fc.assert(
      fc.property(members, fc.integer({ min: 0, max: 3 }), (object, indent) => {
        const bytes = Buffer.from(spaced(object, indent));
        const wanted = new Set(Object.keys(object));
        const spans = topLevelMembers(bytes, wanted);
        const parsed = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
        expect(spans).toBeDefined();
        expect([...spans!.keys()].sort()).toEqual([...wanted].sort());
        for (const [key, { start, end, depth }] of spans!) {
          expect(JSON.parse(bytes.toString('utf8', start, end))).toEqual(parsed[key]);
          expect(depth).toBe(depthOf(parsed[key]));
        }
      }),
      { numRuns: 500 },
    );
  });

  test('a duplicate key spans its last value, as JSON.parse keeps, however the key is spelt', () => {
    const bytes = Buffer.from('{"tools":[1],"a":"}\\"{","too\\u006cs":[{"b":["]"]}]}');
    const span = topLevelMembers(bytes, new Set(['tools']))!.get('tools')!;
    expect(bytes.toString('utf8', span.start, span.end)).toBe('[{"b":["]"]}]');
    expect(span.depth).toBe(3);
  });

  test('a text that is not one object gives no spans', () => {
    for (const text of ['[1]', '"tools"', '{"tools":[1]', '{"tools" [1]}', '{"tools":"x}', ''])
      expect(topLevelMembers(Buffer.from(text), new Set(['tools']))).toBeUndefined();
    expect(topLevelMembers(Buffer.from(' { } '), new Set(['tools']))).toEqual(new Map());
  });
});
