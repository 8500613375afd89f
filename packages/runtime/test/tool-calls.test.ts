import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { OpenAIProvider, ProviderError } from '../src/openai.js';
import {
  EchoProvider,
  MemoryJournal,
  ModelRuntime,
  RequestTooLargeError,
  type GenerationRequest,
  type ModelResultRecord,
  type ModelStreamEvent,
} from '../src/index.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from './helpers/fake-openai-server.js';

let server: FakeOpenAIServer;
beforeAll(async () => {
  server = await startFakeOpenAIServer();
});
afterAll(() => server.close());

const weather = { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' };

function runtimeOn(journal = new MemoryJournal()): { runtime: ModelRuntime; journal: MemoryJournal } {
  const provider = new OpenAIProvider({ baseURL: server.baseURL, apiKey: 'k', model: 'm' });
  return { runtime: new ModelRuntime({ provider, journal }), journal };
}

function resultOf(journal: MemoryJournal): ModelResultRecord {
  return journal.records().find((r) => r.type === 'model_result') as ModelResultRecord;
}

describe('tool calls travel through the runtime', () => {
  test('complete returns the typed tool calls, stop reason tool_calls, and the journal records them', async () => {
    server.reply({ toolCalls: [weather] });
    const { runtime, journal } = runtimeOn();
    const response = await runtime.complete({ messages: [{ role: 'user', content: 'weather?' }] });
    await runtime.shutdown();
    expect(response.stopReason).toBe('tool_calls');
    expect(response.toolCalls).toEqual([{ id: 'call_0', ...weather }]);
    expect(resultOf(journal)).toMatchObject({
      stopReason: 'tool_calls',
      toolCalls: [{ id: 'call_0', ...weather }],
    });
  });

  test('a stream yields the tool call as deltas, finished carries it whole, and the journal records it', async () => {
    server.reply({ toolCalls: [{ ...weather, argumentChunks: 4 }] });
    const { runtime, journal } = runtimeOn();
    const events: ModelStreamEvent[] = [];
    for await (const event of runtime.stream({ messages: [{ role: 'user', content: 'weather?' }] }))
      events.push(event);
    await runtime.shutdown();
    const fragments = events.filter((e) => e.type === 'tool_call_delta');
    expect(fragments[0]).toMatchObject({ index: 0, id: 'call_0', name: 'get_weather' });
    expect(fragments.map((f) => f.arguments ?? '').join('')).toBe(weather.arguments);
    expect(fragments.length).toBeGreaterThan(2);
    const finished = events.at(-1);
    expect(finished).toMatchObject({ type: 'finished', stopReason: 'tool_calls' });
    expect(finished?.type === 'finished' && finished.toolCalls).toEqual([{ id: 'call_0', ...weather }]);
    expect(resultOf(journal)).toMatchObject({
      stopReason: 'tool_calls',
      toolCalls: [{ id: 'call_0', ...weather }],
    });
  });

  test('assistant tool calls, content parts and extra fields reach the upstream verbatim', async () => {
    server.reply({});
    const { runtime } = runtimeOn();
    const request: GenerationRequest = {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: 'data:x' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          toolCalls: [{ id: 'c1', ...weather, extra: { extra_content: { sig: 'abc' } } }],
          extra: { reasoning_content: 'thinking' },
        },
        { role: 'tool', content: '{"t":21}', toolCallId: 'c1' },
      ],
      extra: {
        tool_choice: 'auto',
        seed: 7,
        stop: ['END'],
        response_format: { type: 'json_object' },
        x_vendor: [1],
      },
    };
    await runtime.complete(request);
    await runtime.shutdown();
    const body = server.requests.at(-1)!.body;
    expect(body).toMatchObject({ tool_choice: 'auto', seed: 7, stop: ['END'], x_vendor: [1] });
    expect(body.response_format).toEqual({ type: 'json_object' });
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'data:x' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        reasoning_content: 'thinking',
        tool_calls: [
          {
            id: 'c1',
            type: 'function',
            function: { name: weather.name, arguments: weather.arguments },
            extra_content: { sig: 'abc' },
          },
        ],
      },
      { role: 'tool', content: '{"t":21}', tool_call_id: 'c1' },
    ]);
  });

  test('a stream keeps the caller stream_options and still asks for usage', async () => {
    server.reply({});
    const { runtime } = runtimeOn();
    const stream = runtime.stream({
      messages: [{ role: 'user', content: 'hi' }],
      extra: { stream_options: { include_obfuscation: false } },
    });
    for await (const _ of stream) void _;
    await runtime.shutdown();
    expect(server.requests.at(-1)!.body.stream_options).toEqual({
      include_obfuscation: false,
      include_usage: true,
    });
  });

  test('every upstream chunk reaches the stream consumer as native, unknown fields included', async () => {
    server.reply({ text: 'a b', extra: { vendor_field: 'kept' } });
    const { runtime } = runtimeOn();
    const natives: unknown[] = [];
    for await (const event of runtime.stream({ messages: [{ role: 'user', content: 'hi' }] }))
      if ('native' in event) natives.push(event.native);
    await runtime.shutdown();
    // role chunk, two words, finish chunk, usage chunk
    expect(natives).toHaveLength(5);
    for (const chunk of natives)
      expect(chunk).toMatchObject({ vendor_field: 'kept', object: 'chat.completion.chunk' });
  });
});

describe('SCH-17 counts what is sent', () => {
  test('SCH-17 extra fields count against maxRequestBytes', () => {
    const runtime = new ModelRuntime({
      provider: new EchoProvider(),
      journal: new MemoryJournal(),
      scheduler: { maxRequestBytes: 2000 },
    });
    const messages = [{ role: 'user' as const, content: 'hi' }];
    expect(() => runtime.complete({ messages, extra: { padding: 'x'.repeat(100) } })).not.toThrow();
    expect(() => runtime.complete({ messages, extra: { padding: 'x'.repeat(3000) } })).toThrow(
      RequestTooLargeError,
    );
    const parts = [{ type: 'text', text: 'y'.repeat(3000) }];
    expect(() => runtime.complete({ messages: [{ role: 'user', content: parts }] })).toThrow(
      RequestTooLargeError,
    );
    const toolCalls = [{ id: 'c', name: 'f', arguments: 'z'.repeat(3000) }];
    expect(() => runtime.complete({ messages: [{ role: 'assistant', content: null, toolCalls }] })).toThrow(
      RequestTooLargeError,
    );
  });
});

describe('the echo model answers gateway-shaped requests', () => {
  test('it echoes the text parts of the last user message', async () => {
    const provider = new EchoProvider();
    const response = await provider.complete(
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'hello' },
              { type: 'image_url' },
              { type: 'text', text: ' there' },
            ],
          },
        ],
      },
      { signal: new AbortController().signal, timeoutMs: 1000 },
    );
    expect(response.text).toBe('Echo: hello there');
  });
});

describe('upstream errors keep what the upstream said, apart from the sanitized message', () => {
  test('status, error body and Retry-After are kept on the error, not in its message or enumerable fields', async () => {
    server.reply({
      status: 429,
      error: {
        message: 'slow down, you sent: secret prompt',
        type: 'rate_limit_error',
        code: 'rate_limited',
      },
      headers: { 'retry-after': '7' },
    });
    const { runtime, journal } = runtimeOn();
    const error = (await runtime
      .complete({ messages: [{ role: 'user', content: 'secret prompt' }] })
      .catch((e: unknown) => e)) as ProviderError;
    await runtime.shutdown();
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.upstream).toEqual({
      status: 429,
      retryAfter: '7',
      error: {
        message: 'slow down, you sent: secret prompt',
        type: 'rate_limit_error',
        code: 'rate_limited',
        param: null,
      },
    });
    expect(error.message).not.toContain('secret');
    expect(JSON.stringify(resultOf(journal))).not.toContain('secret');
    expect(Object.keys(error)).not.toContain('upstream');
  });
});
