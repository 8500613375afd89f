import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DESCRIBED_VALUE_MAX_CHARS, clipText, describeValue } from '../src/index.js';

describe('describeValue: what an error message quotes of a bad value', () => {
  it('reads like JSON for small values', () => {
    expect(describeValue('abc')).toBe('"abc"');
    expect(describeValue(42)).toBe('42');
    expect(describeValue(null)).toBe('null');
    expect(describeValue(undefined)).toBe('undefined');
    expect(describeValue({ a: [1, 'x'], b: true })).toBe('{"a":[1,"x"],"b":true}');
  });

  it('quotes at most 200 characters of a megabyte string and says it cut', () => {
    const text = describeValue('x'.repeat(9 * 1024 * 1024));
    expect(text.length).toBe(DESCRIBED_VALUE_MAX_CHARS + 1);
    expect(text.endsWith('…')).toBe(true);
  });

  it('describes a value nested thousands of levels deep without overflowing the stack', () => {
    const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)) as unknown;
    expect(describeValue(deep)).toBe('[[[[…]]]]');
  });

  it('stays within the bound for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 300 }), (value, max) => {
        expect(describeValue(value, max).length).toBeLessThanOrEqual(max + 1);
      }),
    );
  });
});

describe('clipText: a body field that carries a client value (issue 28)', () => {
  it('keeps text up to the limit whole and cuts longer text to the limit and an ellipsis', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 600 }), (text) => {
        const clipped = clipText(text);
        if (text.length <= DESCRIBED_VALUE_MAX_CHARS) expect(clipped).toBe(text);
        else expect(clipped).toBe(`${text.slice(0, DESCRIBED_VALUE_MAX_CHARS)}…`);
      }),
    );
  });
});
