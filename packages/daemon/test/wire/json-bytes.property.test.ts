import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { parseJsonBody, parseJsonBytes } from '../../src/wire/index.js';

/** What a route saw before bodies were read as bytes: the UTF-8 text, parsed. */
const asText = (bytes: Buffer): unknown => parseJsonBody(bytes.toString('utf8'));
const outcome = (parse: () => unknown): unknown => {
  try {
    return { value: parse() };
  } catch (error) {
    return { error: (error as Error).message };
  }
};

describe('a JSON body read from its bytes is the body its UTF-8 text is', () => {
  test('any JSON value, with any characters, parses to the same value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ depthSize: 'small', stringUnit: 'binary' }), (value) => {
        const bytes = Buffer.from(JSON.stringify(value));
        expect(parseJsonBytes(bytes)).toEqual(asText(bytes));
      }),
      { numRuns: 300 },
    );
  });

  test('any bytes at all give the same value or the same 400 as the text would', () => {
    const byteStrings = fc.uint8Array({ maxLength: 64 }).map((raw) => Buffer.from(raw));
    const inString = byteStrings.map((raw) => Buffer.concat([Buffer.from('{"a":"'), raw, Buffer.from('"}')]));
    fc.assert(
      fc.property(fc.oneof(byteStrings, inString), (bytes) => {
        expect(outcome(() => parseJsonBytes(bytes))).toEqual(outcome(() => asText(bytes)));
      }),
      { numRuns: 1_000 },
    );
  });

  test('invalid UTF-8 in a string becomes U+FFFD, a four-byte character stays one character', () => {
    const bytes = Buffer.concat([Buffer.from('{"t":"a'), Buffer.from([0xc3]), Buffer.from('b 😀 é"}')]);
    expect(parseJsonBytes(bytes)).toEqual({ t: 'a\ufffdb 😀 é' });
  });

  test('forbidden keys are dropped beside text outside ASCII, however they are spelt', () => {
    const body = parseJsonBytes(
      Buffer.from('{"é":1,"__proto__":{"x":1},"c\\u006fnstructor":2,"note":"a prototype: ☃"}'),
    ) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['é', 'note']);
    expect(body['note']).toBe('a prototype: ☃');
    expect(({} as Record<string, unknown>)['x']).toBeUndefined();
  });

  test('a text outside ASCII that is not JSON is the same 400', () => {
    expect(() => parseJsonBytes(Buffer.from('{"a": ☃}'))).toThrow('Invalid JSON in request body');
    expect(parseJsonBytes(Buffer.from('  '))).toBeUndefined();
  });
});
