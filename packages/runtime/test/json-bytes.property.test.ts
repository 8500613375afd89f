import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { jsonBytes } from '../src/json-bytes.js';

/** Any value a record could hold, and more (dates, boxed values, null prototypes, sparse arrays). */
const anyValue = fc.anything({
  stringUnit: 'binary',
  withDate: true,
  withNullPrototype: true,
  withBoxedValues: true,
  withSparseArray: true,
});
const asStringify = (value: unknown): Buffer => Buffer.from(JSON.stringify(value) ?? '', 'utf8');

describe('jsonBytes: the UTF-8 bytes of JSON.stringify, without the one big string', () => {
  test('any JSON-like value, in any script, gives the same bytes as JSON.stringify', () => {
    fc.assert(
      fc.property(
        anyValue.map((inner) => ({ inner, list: [inner] })),
        (value) => {
          let expected: Buffer | undefined;
          try {
            expected = asStringify(value);
          } catch {
            expected = undefined;
          }
          if (expected === undefined) expect(() => jsonBytes(value)).toThrow();
          else expect(jsonBytes(value).equals(expected)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  test('members JSON leaves out, toJSON, boxed values and numbers it cannot write', () => {
    const value = {
      gone: undefined,
      fn: () => 1,
      list: [undefined, () => 1, Symbol('s'), NaN, -0, Infinity],
      at: new Date(Date.UTC(2026, 11, 3)),
      boxed: [new String('s'), new Number(2), new Boolean(false)],
      custom: { toJSON: (key: string) => `key ${key}` },
      lone: 'a\ud800b',
    };
    expect(jsonBytes(value).toString('utf8')).toBe(JSON.stringify(value));
  });

  test('a text much larger than the first buffer, with characters outside ASCII, comes out whole', () => {
    const value = {
      system: 'Änderung 改动 😀 '.repeat(20_000),
      tools: Array.from({ length: 50 }, (_, i) => ({ i })),
    };
    expect(jsonBytes(value).equals(asStringify(value))).toBe(true);
  });

  test('a BigInt and a cycle are refused as JSON.stringify refuses them', () => {
    expect(() => jsonBytes({ n: 1n })).toThrow(TypeError);
    const cyclic: Record<string, unknown> = { a: [1] };
    (cyclic['a'] as unknown[]).push(cyclic);
    expect(() => jsonBytes(cyclic)).toThrow('circular');
    const shared = { x: 1 };
    expect(jsonBytes({ a: shared, b: [shared] }).toString()).toBe('{"a":{"x":1},"b":[{"x":1}]}');
  });
});
