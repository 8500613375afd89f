import fc from 'fast-check';
import { describe, expect, test, vi } from 'vitest';
import { EchoProvider, estimateTokens } from '../src/providers/index.js';
import type { GenerationRequest, ModelStreamEvent, ProviderCallOptions } from '../src/types.js';
import { FakeClock } from '../src/testing/index.js';

const request = (text: string, extra: Partial<GenerationRequest> = {}): GenerationRequest => ({
  messages: [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'first question' },
    { role: 'assistant', content: 'first answer' },
    { role: 'user', content: text },
  ],
  ...extra,
});

const callOptions = (signal = new AbortController().signal): ProviderCallOptions => ({
  signal,
  timeoutMs: 10_000,
});

/** The iterator behind a provider stream, for pulling events one at a time. */
function iterate<T>(events: AsyncIterable<T>): AsyncIterator<T> {
  return events[Symbol.asyncIterator]();
}

async function collect(events: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

/** Lets pending promise callbacks run (several hops: generator, sleep, await). */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

describe('EchoProvider', () => {
  test('identifies itself as echo / echo-1', () => {
    const provider = new EchoProvider();
    expect(provider.name).toBe('echo');
    expect(provider.defaultModel).toBe('echo-1');
  });

  test('answers deterministically from the last user message, with word-count usage', async () => {
    const provider = new EchoProvider();
    const first = await provider.complete(request('what is the tide today'), callOptions());
    const second = await provider.complete(request('what is the tide today'), callOptions());
    expect(first).toEqual({
      text: 'Echo: what is the tide today',
      stopReason: 'end_turn',
      // 2 + 2 + 2 + 5 words over all messages; 6 words answered.
      usage: { inputTokens: 11, outputTokens: 6 },
    });
    expect(second).toEqual(first);
  });

  test('a conversation without a user message answers the bare prefix', async () => {
    const response = await new EchoProvider().complete(
      { messages: [{ role: 'system', content: 'x' }] },
      callOptions(),
    );
    expect(response.text).toBe('Echo: ');
    expect(response.stopReason).toBe('end_turn');
  });

  test('maxOutputTokens truncates at a word boundary with stopReason max_tokens', async () => {
    const response = await new EchoProvider().complete(
      request('one two three four', { maxOutputTokens: 3 }),
      callOptions(),
    );
    expect(response.text).toBe('Echo: one two');
    expect(response.stopReason).toBe('max_tokens');
    expect(response.usage.outputTokens).toBe(3);
  });

  test('an answer exactly at maxOutputTokens is not truncated', async () => {
    const response = await new EchoProvider().complete(
      request('one two', { maxOutputTokens: 3 }),
      callOptions(),
    );
    expect(response).toMatchObject({ text: 'Echo: one two', stopReason: 'end_turn' });
  });

  test('maxOutputTokens 0 answers nothing', async () => {
    const response = await new EchoProvider().complete(request('hi', { maxOutputTokens: 0 }), callOptions());
    expect(response).toMatchObject({ text: '', stopReason: 'max_tokens', usage: { outputTokens: 0 } });
  });

  test('an invalid maxOutputTokens is rejected naming the value', async () => {
    await expect(
      new EchoProvider().complete(request('hi', { maxOutputTokens: -2 }), callOptions()),
    ).rejects.toThrow('maxOutputTokens must be a non-negative integer, got -2');
  });

  test('estimateTokens counts what /\\S+/g matches, for any text', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.oneof(
            fc.constantFrom(' ', '\t', '\n', '\u00a0', '\u2003', '\u3000', '\ufeff', '\u180e', '\u200b'),
            fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
          ),
        }),
        (text) => {
          expect(estimateTokens(text)).toBe(text.match(/\S+/g)?.length ?? 0);
        },
      ),
      { numRuns: 1_000 },
    );
  });

  test('estimateTokens counts whitespace-separated words', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('  a  b\tc\n')).toBe(3);
  });

  test.each([
    [{ latencyMs: -1 }, 'latencyMs must be a non-negative finite number, got -1'],
    [{ latencyMs: Number.NaN }, 'latencyMs must be a non-negative finite number, got NaN'],
    [{ chunkDelayMs: Infinity }, 'chunkDelayMs must be a non-negative finite number, got Infinity'],
    [{ latencyMs: 2 ** 31 }, 'latencyMs must be at most 2147483647 ms, got 2147483648'],
    [{ chunkSize: 0 }, 'chunkSize must be a positive integer, got 0'],
    [{ chunkSize: 1.5 }, 'chunkSize must be a positive integer, got 1.5'],
  ])('constructor rejects %o', (options, message) => {
    expect(() => new EchoProvider(options)).toThrow(message);
  });

  test('streams chunkSize-character deltas in order, then finished with the same usage', async () => {
    const provider = new EchoProvider({ chunkSize: 4 });
    const events = await collect(provider.stream(request('abcdefgh'), callOptions()));
    expect(events).toEqual([
      { type: 'delta', text: 'Echo' },
      { type: 'delta', text: ': ab' },
      { type: 'delta', text: 'cdef' },
      { type: 'delta', text: 'gh' },
      { type: 'finished', stopReason: 'end_turn', usage: { inputTokens: 7, outputTokens: 2 } },
    ]);
  });

  test('a stream never splits a surrogate pair across deltas', async () => {
    const provider = new EchoProvider({ chunkSize: 7 });
    const events = await collect(provider.stream(request('😀😀'), callOptions()));
    const deltas = events.flatMap((event) => (event.type === 'delta' ? [event.text] : []));
    expect(deltas.join('')).toBe('Echo: 😀😀');
    const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    for (const delta of deltas) expect(delta).not.toMatch(loneSurrogate);
  });

  test('a truncated stream finishes with max_tokens', async () => {
    const events = await collect(
      new EchoProvider().stream(request('one two three', { maxOutputTokens: 2 }), callOptions()),
    );
    expect(events).toEqual([
      { type: 'delta', text: 'Echo: one' },
      { type: 'finished', stopReason: 'max_tokens', usage: { inputTokens: 9, outputTokens: 2 } },
    ]);
  });

  test('with no latency and no chunk delay no timer is ever scheduled', async () => {
    const clock = new FakeClock();
    const setTimer = vi.spyOn(clock, 'setTimer');
    const provider = new EchoProvider({ clock, chunkSize: 2 });
    await provider.complete(request('hello there'), callOptions());
    const events = await collect(provider.stream(request('hello there'), callOptions()));
    expect(events.at(-1)).toMatchObject({ type: 'finished' });
    expect(setTimer).not.toHaveBeenCalled();
  });

  test('complete waits latencyMs on the injected clock', async () => {
    const clock = new FakeClock();
    const provider = new EchoProvider({ clock, latencyMs: 100 });
    let settled = false;
    const result = provider.complete(request('hi'), callOptions()).finally(() => (settled = true));
    await flush();
    clock.advance(99);
    await flush();
    expect(settled).toBe(false);
    clock.advance(1);
    await expect(result).resolves.toMatchObject({ text: 'Echo: hi' });
    expect(clock.pendingTimers).toBe(0);
  });

  test('stream waits latencyMs before the first delta and chunkDelayMs between deltas', async () => {
    const clock = new FakeClock();
    const provider = new EchoProvider({ clock, latencyMs: 50, chunkDelayMs: 10, chunkSize: 6 });
    const iterator = iterate(provider.stream(request('abcdef'), callOptions()));

    let first: IteratorResult<ModelStreamEvent> | undefined;
    void iterator.next().then((r) => (first = r));
    await flush();
    clock.advance(49);
    await flush();
    expect(first).toBeUndefined();
    clock.advance(1);
    await flush();
    expect(first?.value).toEqual({ type: 'delta', text: 'Echo: ' });

    let second: IteratorResult<ModelStreamEvent> | undefined;
    void iterator.next().then((r) => (second = r));
    await flush();
    expect(second).toBeUndefined();
    clock.advance(10);
    await flush();
    expect(second?.value).toEqual({ type: 'delta', text: 'abcdef' });

    // No delay before `finished`.
    expect((await iterator.next()).value).toMatchObject({ type: 'finished', stopReason: 'end_turn' });
    expect((await iterator.next()).done).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  test('abort during latency rejects complete with exactly signal.reason and clears the timer', async () => {
    const clock = new FakeClock();
    const provider = new EchoProvider({ clock, latencyMs: 1_000 });
    const controller = new AbortController();
    const result = provider.complete(request('hi'), callOptions(controller.signal));
    await flush();
    expect(clock.pendingTimers).toBe(1);
    const reason = new Error('deadline');
    controller.abort(reason);
    await expect(result).rejects.toBe(reason);
    expect(clock.pendingTimers).toBe(0);
  });

  test('a pre-aborted signal rejects at once without scheduling a timer', async () => {
    const clock = new FakeClock();
    const provider = new EchoProvider({ clock, latencyMs: 1_000 });
    const controller = new AbortController();
    const reason = new Error('cancelled');
    controller.abort(reason);
    await expect(provider.complete(request('hi'), callOptions(controller.signal))).rejects.toBe(reason);
    await expect(collect(provider.stream(request('hi'), callOptions(controller.signal)))).rejects.toBe(
      reason,
    );
    expect(clock.pendingTimers).toBe(0);
  });

  test('abort between chunks throws signal.reason from the stream and clears the timer', async () => {
    const clock = new FakeClock();
    const provider = new EchoProvider({ clock, chunkDelayMs: 100, chunkSize: 3 });
    const controller = new AbortController();
    const iterator = iterate(provider.stream(request('abcdef'), callOptions(controller.signal)));
    expect((await iterator.next()).value).toEqual({ type: 'delta', text: 'Ech' });
    const pending = iterator.next();
    await flush();
    expect(clock.pendingTimers).toBe(1);
    const reason = new Error('consumer gone');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(clock.pendingTimers).toBe(0);
  });

  test('abort while the consumer holds a delta throws signal.reason on the next pull (fast path)', async () => {
    const provider = new EchoProvider({ chunkSize: 3 });
    const controller = new AbortController();
    const iterator = iterate(provider.stream(request('abcdef'), callOptions(controller.signal)));
    await iterator.next();
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(iterator.next()).rejects.toBe(reason);
  });
});
