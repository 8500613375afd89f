import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { OpenAIProvider, ProviderError } from '../src/openai.js';
import type { GenerationRequest, ModelStreamEvent, ProviderCallOptions } from '../src/types.js';
import { FakeClock } from '../src/testing/index.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from './helpers/fake-openai-server.js';

const SECRET_PROMPT = 'my secret prompt text';

const request: GenerationRequest = {
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: SECRET_PROMPT },
    { role: 'assistant', content: 'calling a tool', name: 'helper' },
    { role: 'tool', content: '{"temp":21}', toolCallId: 'call_1' },
  ],
  tools: [
    { name: 'weather', description: 'Current weather', parameters: { type: 'object', properties: {} } },
  ],
  maxOutputTokens: 64,
  temperature: 0.2,
};

const callOptions = (overrides: Partial<ProviderCallOptions> = {}): ProviderCallOptions => ({
  signal: new AbortController().signal,
  timeoutMs: 10_000,
  ...overrides,
});

/** The iterator behind a provider stream, for pulling events one at a time. */
function iterate<T>(events: AsyncIterable<T>): AsyncIterator<T> {
  return events[Symbol.asyncIterator]();
}

/** The typed view of a stream: `raw` chunks left out, `native` chunks stripped. */
async function* typed(events: AsyncIterable<ModelStreamEvent>): AsyncGenerator<ModelStreamEvent> {
  for await (const event of events) {
    if (event.type === 'raw') continue;
    if ('native' in event) {
      const { native: _native, ...rest } = event;
      yield rest as ModelStreamEvent;
    } else yield event;
  }
}

async function collect(events: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = [];
  for await (const event of typed(events)) out.push(event);
  return out;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error,
  );
}

/** Resolves once the server has recorded `count` requests. */
async function receivedRequests(server: FakeOpenAIServer, count: number): Promise<void> {
  await vi.waitFor(() => expect(server.requestCount).toBe(count), { timeout: 5_000, interval: 5 });
}

let server: FakeOpenAIServer;
let provider: OpenAIProvider;

beforeEach(async () => {
  vi.stubEnv('OPENAI_BASE_URL', '');
  vi.stubEnv('OPENAI_API_KEY', '');
  server = await startFakeOpenAIServer();
  provider = new OpenAIProvider({ baseURL: server.baseURL, apiKey: 'sk-test-key', model: 'test-model' });
});

afterEach(async () => {
  vi.unstubAllEnvs();
  await server.close();
});

describe('OpenAIProvider construction', () => {
  test('identifies itself as openai with the configured model', () => {
    expect(provider.name).toBe('openai');
    expect(provider.defaultModel).toBe('test-model');
    expect(provider.endpoint).toBe(server.baseURL);
  });

  test.each([
    [{ model: '' }, 'model must be a non-empty string, got ""'],
    [
      { model: 'm', baseURL: 'ftp://example.com/v1' },
      'baseURL must be an http(s) URL, got "ftp://example.com/v1"',
    ],
    [{ model: 'm', baseURL: 'not a url' }, 'baseURL must be an http(s) URL, got "not a url"'],
  ])('rejects %o naming the value', (options, message) => {
    expect(() => new OpenAIProvider(options)).toThrow(message);
  });

  test('falls back to OPENAI_BASE_URL and OPENAI_API_KEY', async () => {
    vi.stubEnv('OPENAI_BASE_URL', server.baseURL);
    vi.stubEnv('OPENAI_API_KEY', 'sk-from-env');
    const fromEnv = new OpenAIProvider({ model: 'env-model' });
    expect(fromEnv.endpoint).toBe(server.baseURL);
    await fromEnv.complete(request, callOptions());
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-from-env');
  });

  test('sends no Authorization header when no key is configured (local servers)', async () => {
    const keyless = new OpenAIProvider({ baseURL: server.baseURL, model: 'llama' });
    await keyless.complete(request, callOptions());
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
  });
});

describe('OpenAIProvider.complete', () => {
  test('returns text, usage and end_turn', async () => {
    server.reply({ text: 'Hi there', usage: { prompt_tokens: 12, completion_tokens: 3 } });
    const response = await provider.complete(request, callOptions());
    expect(response).toEqual({
      text: 'Hi there',
      stopReason: 'end_turn',
      usage: { inputTokens: 12, outputTokens: 3 },
      native: expect.objectContaining({ object: 'chat.completion' }),
    });
  });

  test('sends model, mapped messages, max_tokens, temperature and tools; the key as bearer token', async () => {
    await provider.complete(request, callOptions());
    expect(server.requests).toHaveLength(1);
    const { body, headers, path } = server.requests[0]!;
    expect(path).toBe('/v1/chat/completions');
    expect(headers.authorization).toBe('Bearer sk-test-key');
    // SCH-8: the endpoint is told the effective timeout (whole seconds), and this is attempt 0.
    expect(headers['x-stainless-timeout']).toBe('10');
    expect(headers['x-stainless-retry-count']).toBe('0');
    expect(body).toEqual({
      model: 'test-model',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: SECRET_PROMPT },
        { role: 'assistant', content: 'calling a tool', name: 'helper' },
        { role: 'tool', content: '{"temp":21}', tool_call_id: 'call_1' },
      ],
      max_tokens: 64,
      temperature: 0.2,
      tools: [
        {
          type: 'function',
          function: {
            name: 'weather',
            description: 'Current weather',
            parameters: { type: 'object', properties: {} },
          },
        },
      ],
      stream: false,
    });
  });

  test('the call options model overrides the default; absent fields are not sent', async () => {
    await provider.complete({ messages: [{ role: 'user', content: 'hi' }] }, callOptions({ model: 'other' }));
    expect(server.requests[0]?.body).toEqual({
      model: 'other',
      messages: [{ role: 'user', content: 'hi' }],
      stream: false,
    });
  });

  test.each([
    ['length', 'max_tokens'],
    ['content_filter', 'refusal'],
    ['tool_calls', 'tool_calls'],
    [null, 'end_turn'],
  ] as const)('finish_reason %s maps to %s', async (finishReason, stopReason) => {
    server.reply({ finishReason });
    expect((await provider.complete(request, callOptions())).stopReason).toBe(stopReason);
  });

  test('a server that reports no usage yields zero counts', async () => {
    server.reply({ usage: null });
    expect((await provider.complete(request, callOptions())).usage).toEqual({
      inputTokens: 0,
      outputTokens: 0,
    });
  });

  test('429 is a retryable ProviderError with the status; no retry is attempted', async () => {
    server.reply({ status: 429, error: { type: 'rate_limit_error', code: 'rate_limit_exceeded' } });
    const error = await rejection(provider.complete(request, callOptions()));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 429, retryable: true, code: 'model_provider_error' });
    expect((error as Error).message).toBe(`${server.baseURL} answered HTTP 429 (rate_limit_exceeded)`);
    expect(server.requestCount).toBe(1);
  });

  test('500 is retryable and is not retried', async () => {
    server.reply({ status: 500 });
    const error = await rejection(provider.complete(request, callOptions()));
    expect(error).toMatchObject({ status: 500, retryable: true });
    expect(server.requestCount).toBe(1);
  });

  test('400 is not retryable, and the message never carries prompt text the server echoed', async () => {
    server.reply({
      status: 400,
      error: { message: `bad input: ${SECRET_PROMPT}`, type: 'invalid_request_error' },
    });
    const error = await rejection(provider.complete(request, callOptions()));
    expect(error).toMatchObject({ status: 400, retryable: false });
    expect((error as Error).message).toContain('HTTP 400');
    expect((error as Error).message).not.toContain(SECRET_PROMPT);
    expect(server.requestCount).toBe(1);
  });

  test('an unreachable endpoint is a retryable ProviderError without status', async () => {
    const closed = await startFakeOpenAIServer();
    await closed.close();
    const unreachable = new OpenAIProvider({ baseURL: closed.baseURL, apiKey: 'k', model: 'm' });
    const error = await rejection(unreachable.complete(request, callOptions()));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: undefined, retryable: true });
    expect((error as Error).message).not.toContain(SECRET_PROMPT);
  });

  test('a tool message without toolCallId is refused before any request is sent', async () => {
    const error = await rejection(
      provider.complete({ messages: [{ role: 'tool', content: SECRET_PROMPT }] }, callOptions()),
    );
    expect(error).toMatchObject({
      retryable: false,
      message: 'messages[0] has role "tool" but no toolCallId',
    });
    expect(server.requestCount).toBe(0);
  });

  test('SCH-8 the per-call timeout is honoured when the server hangs (real time, 200 ms)', async () => {
    server.reply({ hang: true });
    const started = performance.now();
    const error = await rejection(provider.complete(request, callOptions({ timeoutMs: 200 })));
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({
      retryable: true,
      message: `${server.baseURL} did not answer within 200 ms`,
    });
    expect(elapsed).toBeGreaterThanOrEqual(150);
    expect(elapsed).toBeLessThan(5_000);
    expect(server.requestCount).toBe(1);
  });

  test('the timeout runs on the injected clock and its timer is cleared after the call', async () => {
    const clock = new FakeClock();
    const timed = new OpenAIProvider({ baseURL: server.baseURL, apiKey: 'k', model: 'm', clock });
    await timed.complete(request, callOptions());
    expect(clock.pendingTimers).toBe(0);

    server.reply({ hang: true });
    const result = rejection(timed.complete(request, callOptions({ timeoutMs: 60_000 })));
    await receivedRequests(server, 2);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(60_000);
    expect(await result).toMatchObject({
      retryable: true,
      message: `${server.baseURL} did not answer within 60000 ms`,
    });
    expect(clock.pendingTimers).toBe(0);
  });

  test('the runtime signal keeps no listener after the call', async () => {
    const signal = new AbortController().signal;
    await provider.complete(request, callOptions({ signal }));
    server.reply({ status: 500 });
    await rejection(provider.complete(request, callOptions({ signal })));
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  test('abort rejects with exactly signal.reason', async () => {
    server.reply({ hang: true });
    const controller = new AbortController();
    const result = rejection(provider.complete(request, callOptions({ signal: controller.signal })));
    await receivedRequests(server, 1);
    const reason = new Error('runtime deadline');
    controller.abort(reason);
    expect(await result).toBe(reason);
  });

  test('a pre-aborted signal rejects with its reason and sends nothing', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled');
    controller.abort(reason);
    expect(await rejection(provider.complete(request, callOptions({ signal: controller.signal })))).toBe(
      reason,
    );
    expect(server.requestCount).toBe(0);
  });
});

describe('OpenAIProvider.stream', () => {
  test('yields the deltas in order, then finished with the usage chunk', async () => {
    server.reply({ chunks: ['Hel', 'lo', ' world'], usage: { prompt_tokens: 9, completion_tokens: 3 } });
    const events = await collect(provider.stream(request, callOptions()));
    expect(events).toEqual([
      { type: 'delta', text: 'Hel' },
      { type: 'delta', text: 'lo' },
      { type: 'delta', text: ' world' },
      { type: 'finished', stopReason: 'end_turn', usage: { inputTokens: 9, outputTokens: 3 } },
    ]);
  });

  test('asks for streaming with usage', async () => {
    await collect(provider.stream(request, callOptions()));
    expect(server.requests[0]?.body).toMatchObject({
      model: 'test-model',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 64,
      temperature: 0.2,
    });
  });

  test('finish_reason length finishes with max_tokens', async () => {
    server.reply({ text: 'cut short', finishReason: 'length' });
    const events = await collect(provider.stream(request, callOptions()));
    expect(events.at(-1)).toMatchObject({ type: 'finished', stopReason: 'max_tokens' });
  });

  test('a server that sends no usage chunk finishes with zero counts', async () => {
    server.reply({ text: 'hi', usage: null });
    const events = await collect(provider.stream(request, callOptions()));
    expect(events).toEqual([
      { type: 'delta', text: 'hi' },
      { type: 'finished', stopReason: 'end_turn', usage: { inputTokens: 0, outputTokens: 0 } },
    ]);
  });

  test('429 before the stream starts is a retryable ProviderError; no retry', async () => {
    server.reply({ status: 429 });
    const error = await rejection(collect(provider.stream(request, callOptions())));
    expect(error).toMatchObject({ status: 429, retryable: true });
    expect(server.requestCount).toBe(1);
  });

  test('abort mid-stream throws exactly signal.reason', async () => {
    server.reply({ chunks: ['a', 'b', 'c'], hangAfterChunks: 1 });
    const controller = new AbortController();
    const iterator = iterate(typed(provider.stream(request, callOptions({ signal: controller.signal }))));
    expect((await iterator.next()).value).toEqual({ type: 'delta', text: 'a' });
    const pending = iterator.next();
    const reason = new Error('consumer cancelled');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  test('abort while the consumer holds a delta throws signal.reason on the next pull', async () => {
    server.reply({ chunks: ['a', 'b', 'c'], chunkDelayMs: 50 });
    const controller = new AbortController();
    const iterator = iterate(typed(provider.stream(request, callOptions({ signal: controller.signal }))));
    await iterator.next();
    const reason = new Error('gone');
    controller.abort(reason);
    await expect(iterator.next()).rejects.toBe(reason);
  });

  test('the timeout also bounds a stream that stalls after its first chunk', async () => {
    server.reply({ chunks: ['a', 'b'], hangAfterChunks: 1 });
    const events: ModelStreamEvent[] = [];
    const error = await rejection(
      (async () => {
        for await (const event of typed(provider.stream(request, callOptions({ timeoutMs: 200 }))))
          events.push(event);
      })(),
    );
    expect(events).toEqual([{ type: 'delta', text: 'a' }]);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({
      retryable: true,
      message: `${server.baseURL} did not answer within 200 ms`,
    });
  });

  test('the runtime signal keeps no listener after a stream, finished or left early', async () => {
    const signal = new AbortController().signal;
    await collect(provider.stream(request, callOptions({ signal })));
    for await (const _ of provider.stream(request, callOptions({ signal }))) break;
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  test('leaving a stream early cancels the request and clears the timer', async () => {
    const clock = new FakeClock();
    const timed = new OpenAIProvider({ baseURL: server.baseURL, apiKey: 'k', model: 'm', clock });
    server.reply({ chunks: ['a', 'b', 'c'], chunkDelayMs: 10_000 });
    for await (const event of typed(timed.stream(request, callOptions()))) {
      expect(event).toEqual({ type: 'delta', text: 'a' });
      break;
    }
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('fake OpenAI server', () => {
  test('keeps at most maxRecordedRequests requests but counts them all', async () => {
    const small = await startFakeOpenAIServer({ maxRecordedRequests: 2 });
    try {
      const client = new OpenAIProvider({ baseURL: small.baseURL, apiKey: 'k', model: 'm' });
      for (let i = 0; i < 3; i++) await client.complete(request, callOptions());
      expect(small.requests).toHaveLength(2);
      expect(small.requestCount).toBe(3);
    } finally {
      await small.close();
    }
  });
});
