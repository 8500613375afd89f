import { describe, expect, test } from 'vitest';
import { RawJson, plainJson } from '../src/index.js';
import { jsonBytes } from '../src/json-bytes.js';
import { jsonByteBound, jsonByteLength } from '../src/scheduler/request-size.js';

// docs/decisions/042: a member kept as the bytes a client sent.
const BODY = Buffer.from('{"tools": [ {"name" : "caf\\u00e9 é"} ],"n":1}');
const start = BODY.indexOf('[');
const end = BODY.indexOf(']') + 1;
const tools = RawJson.ofParsedSpan(BODY, start, end);
const request = { messages: [{ role: 'user', content: 'hi' }], extra: { tools } };

describe('a RawJson member', () => {
  test('is written into a record as the bytes sent, without re-encoding them', () => {
    expect(jsonBytes(request).toString('utf8')).toBe(
      `{"messages":[{"role":"user","content":"hi"}],"extra":{"tools":${BODY.toString('utf8', start, end)}}}`,
    );
  });

  test('counts against the request-size cap by those bytes, exactly and as a bound', () => {
    const written = jsonBytes(request).length;
    expect(jsonByteLength(request, Infinity)).toBe(written);
    expect(jsonByteBound(request, Infinity)).toBeGreaterThanOrEqual(written);
    expect(jsonByteLength(request, 10)).toBeGreaterThan(10);
  });

  test('means its value to JSON.stringify and to readers that interpret it', () => {
    const value = [{ name: 'café é' }];
    expect(JSON.parse(JSON.stringify(request.extra))).toEqual({ tools: value });
    expect(plainJson(tools)).toEqual(value);
    expect(plainJson(3)).toBe(3);
  });

  test('is refused for a span outside its body, naming the span', () => {
    expect(() => RawJson.ofParsedSpan(BODY, 10, BODY.length + 1)).toThrow(/\[10, \d+\) is not within/);
    expect(() => RawJson.ofParsedSpan(BODY, 5, 5)).toThrow(RangeError);
  });
});
