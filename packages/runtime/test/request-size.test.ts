import fc from 'fast-check';
import { expect, test } from 'vitest';
import { countedOptions, countedOptionsBytes } from '../src/gateway/counted-options.js';
import { jsonByteBound, jsonByteLength } from '../src/scheduler/request-size.js';

test('SCH-17 the bounded counter equals the UTF-8 length of JSON.stringify for any JSON value', () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      const exact = Buffer.byteLength(JSON.stringify(value));
      expect(jsonByteLength(value, Number.MAX_SAFE_INTEGER)).toBe(exact);
    }),
    { numRuns: 500 },
  );
});

test('SCH-17 strings with escapes, astral characters and lone surrogates count like JSON.stringify', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary' }), (text) => {
      const value = { text, nested: [text, { text }] };
      expect(jsonByteLength(value, Number.MAX_SAFE_INTEGER)).toBe(Buffer.byteLength(JSON.stringify(value)));
    }),
    { numRuns: 500 },
  );
});

test('SCH-17 undefined members, toJSON and dates are counted as JSON.stringify writes them', () => {
  const value = { a: undefined, b: () => 1, c: [undefined, 1], d: new Date(0), e: null, f: -0.5e-7 };
  expect(jsonByteLength(value, 10_000)).toBe(Buffer.byteLength(JSON.stringify(value)));
});

test('SCH-17 counting stops once past the limit instead of walking a huge value', () => {
  const huge = {
    messages: Array.from({ length: 100_000 }, () => ({ role: 'user', content: 'x'.repeat(100) })),
  };
  let reads = 0;
  const watched = new Proxy(huge.messages, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver);
    },
  });
  expect(jsonByteLength({ messages: watched }, 1_000)).toBeGreaterThan(1_000);
  expect(reads).toBeLessThan(20);
});

test('SCH-17 a circular structure is refused like JSON.stringify refuses it, or counted as too large', () => {
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  expect(() => jsonByteLength(cyclic, Number.MAX_SAFE_INTEGER)).toThrow(/circular/);
  expect(jsonByteLength(cyclic, 1_000)).toBeGreaterThan(1_000);
});

test('SCH-17 the options are counted exactly as JSON.stringify writes them', () => {
  const text = fc.string({ unit: 'binary', maxLength: 40 });
  fc.assert(
    fc.property(
      fc.double({ min: 0, max: 1e9, noNaN: true }),
      text,
      text,
      fc.constantFrom('complete' as const, 'stream' as const),
      text,
      fc.option(text, { nil: undefined }),
      fc.option(text, { nil: undefined }),
      (timeoutMs, provider, model, kind, taskId, sessionId, turnId) => {
        const options = countedOptions(timeoutMs, provider, model, kind, taskId, sessionId, turnId);
        const bytes = (s: string | undefined) =>
          s === undefined ? undefined : Buffer.byteLength(JSON.stringify(s));
        expect(
          countedOptionsBytes(
            timeoutMs,
            bytes(provider)!,
            bytes(model)!,
            bytes(kind)!,
            bytes(taskId)!,
            bytes(sessionId),
            bytes(turnId),
          ),
        ).toBe(Buffer.byteLength(JSON.stringify(options)));
      },
    ),
    { numRuns: 500 },
  );
});

test('SCH-17 the bound that reads no characters is never below the exact count, so a request it admits fits', () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.string({ unit: 'binary' }), (value, text) => {
      for (const candidate of [value, { messages: [{ role: 'user', content: text }], extra: value }]) {
        const exact = Buffer.byteLength(JSON.stringify(candidate));
        expect(jsonByteBound(candidate, Number.MAX_SAFE_INTEGER)).toBeGreaterThanOrEqual(exact);
      }
    }),
    { numRuns: 500 },
  );
});

test('SCH-17 admission by the bound decides exactly as the exact count, at every limit around the size', async () => {
  const { Scheduler } = await import('../src/scheduler/scheduler.js');
  const { Job } = await import('../src/scheduler/job.js');
  const { RequestTooLargeError } = await import('../src/errors.js');
  fc.assert(
    fc.property(fc.jsonValue(), fc.integer({ min: -40, max: 40 }), (request, offset) => {
      const exact =
        Buffer.byteLength(JSON.stringify(request) ?? 'null') +
        jsonByteLength({ timeoutMs: 600_000 }, Infinity);
      const limit = Math.max(1, exact + offset);
      const scheduler = new Scheduler({ maxRequestBytes: limit });
      const admit = () => scheduler.admit(new Job('c', 't', undefined, 'complete', request));
      if (exact <= limit) expect(admit).not.toThrow();
      else expect(admit).toThrow(RequestTooLargeError);
    }),
    { numRuns: 500 },
  );
});

test('SCH-17 the bound refuses what the exact count refuses: cycles and BigInt', () => {
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  expect(() => jsonByteBound(cyclic, Number.MAX_SAFE_INTEGER)).toThrow(/circular/);
  expect(() => jsonByteBound({ n: 1n }, Number.MAX_SAFE_INTEGER)).toThrow(/BigInt/);
  expect(jsonByteBound(cyclic, 1_000)).toBeGreaterThan(1_000);
});
