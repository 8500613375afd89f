import { afterAll, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import { AnthropicProvider, ProviderError } from '../src/anthropic.js';
import type { GenerationRequest, ModelStreamEvent, ProviderCallOptions } from '../src/types.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from './helpers/fake-anthropic-server.js';

// What the provider contract does not cover: how the runtime's types become a Messages body
// (and the gateway's chat-completions fields with them), the Anthropic-only stop reasons and
// usage fields, the stream's error event, and the provider's options.

const options = (): ProviderCallOptions => ({ signal: new AbortController().signal, timeoutMs: 10_000 });

async function collect(events: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

let server: FakeAnthropicServer;
let provider: AnthropicProvider;
beforeAll(async () => {
  server = await startFakeAnthropicServer();
});
afterAll(async () => {
  await server?.close();
});
beforeEach(() => {
  vi.stubEnv('ANTHROPIC_API_KEY', '');
  vi.stubEnv('ANTHROPIC_BASE_URL', '');
  server.reply({});
  server.requests.length = 0;
  provider = new AnthropicProvider({ baseURL: server.baseURL, apiKey: 'sk-ant-test', model: 'claude-test' });
  return () => vi.unstubAllEnvs();
});

const lastBody = (): Record<string, unknown> => server.requests.at(-1)!.body;

describe('the Messages body', () => {
  test('system and developer messages become system; tool calls and results become tool_use and tool_result blocks', async () => {
    const request: GenerationRequest = {
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in English.' }] },
        { role: 'user', content: 'Weather in Oslo and Rome?' },
        {
          role: 'assistant',
          content: 'Looking it up.',
          toolCalls: [
            { id: 'toolu_1', name: 'weather', arguments: '{"city":"Oslo"}' },
            { id: 'toolu_2', name: 'weather', arguments: '' },
          ],
        },
        { role: 'tool', toolCallId: 'toolu_1', content: '3 C' },
        { role: 'tool', toolCallId: 'toolu_2', content: [{ type: 'text', text: '21 C' }] },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [
        { name: 'weather', description: 'Weather now', parameters: { type: 'object', properties: {} } },
      ],
      maxOutputTokens: 300,
      temperature: 0.3,
    };
    await provider.complete(request, options());
    expect(lastBody()).toEqual({
      model: 'claude-test',
      stream: false,
      max_tokens: 300,
      temperature: 0.3,
      system: 'You are terse.\n\nAnswer in English.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo and Rome?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Looking it up.' },
            { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Oslo' } },
            { type: 'tool_use', id: 'toolu_2', name: 'weather', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '3 C' }] },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: '21 C' }] },
            { type: 'text', text: 'Thanks' },
          ],
        },
      ],
      tools: [
        { name: 'weather', description: 'Weather now', input_schema: { type: 'object', properties: {} } },
      ],
    });
  });

  test('the key, the API version and the default max_tokens are sent', async () => {
    await provider.complete({ messages: [{ role: 'user', content: 'hi' }] }, options());
    const { headers, body } = server.requests.at(-1)!;
    expect(headers['authorization'] ?? headers['x-api-key']).toMatch(/sk-ant-test/);
    expect(headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(body.max_tokens).toBe(4096);
  });

  test("the gateway's chat-completions fields are translated, those without an Anthropic meaning left out", async () => {
    const extra = {
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'lookup' } },
      parallel_tool_calls: false,
      stop: 'END',
      max_completion_tokens: 77,
      top_p: 0.9,
      user: 'user-7',
      stream_options: { include_usage: true },
      presence_penalty: 0.5,
      seed: 3,
    };
    await provider.complete({ messages: [{ role: 'user', content: 'hi' }], extra }, options());
    expect(lastBody()).toEqual({
      model: 'claude-test',
      stream: false,
      max_tokens: 77,
      top_p: 0.9,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      stop_sequences: ['END'],
      tools: [{ name: 'lookup', input_schema: { type: 'object' } }],
      tool_choice: { type: 'tool', name: 'lookup', disable_parallel_tool_use: true },
      metadata: { user_id: 'user-7' },
    });
  });

  test.each([
    ['required', { type: 'any' }],
    ['none', { type: 'none' }],
    [{ type: 'any' }, { type: 'any' }],
  ])('tool_choice %j is sent as %j', async (choice, expected) => {
    await provider.complete(
      { messages: [{ role: 'user', content: 'hi' }], extra: { tool_choice: choice } },
      options(),
    );
    expect(lastBody().tool_choice).toEqual(expected);
  });

  test('an image_url part becomes an image block: a data URL as base64, another URL as url', async () => {
    const content = [
      { type: 'text', text: 'What is this?' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
    ];
    await provider.complete({ messages: [{ role: 'user', content }] }, options());
    expect((lastBody().messages as { content: unknown[] }[])[0]!.content).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
    ]);
  });

  test.each([
    [
      { role: 'user' as const, content: [{ type: 'input_audio', input_audio: {} }] },
      'messages[0] has a content part of type "input_audio", which Anthropic does not take',
    ],
    [
      { role: 'assistant' as const, content: null, toolCalls: [{ id: 't', name: 'f', arguments: '[1]' }] },
      'messages[0].toolCalls[0].arguments must be a JSON object for Anthropic',
    ],
    [{ role: 'tool' as const, content: 'x' }, 'messages[0] has role "tool" but no toolCallId'],
  ])('a message Anthropic cannot take is refused before any request: %j', async (message, text) => {
    const before = server.requestCount;
    const error = await provider.complete({ messages: [message] }, options()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).message).toBe(text);
    expect((error as ProviderError).retryable).toBe(false);
    expect(server.requestCount).toBe(before);
  });
});

describe('answers', () => {
  test.each([
    ['max_tokens', 'max_tokens'],
    ['stop_sequence', 'end_turn'],
    ['refusal', 'refusal'],
    ['pause_turn', 'end_turn'],
    ['model_context_window_exceeded', 'max_tokens'],
  ])('stop reason %s is %s, whole and streamed', async (wire, runtime) => {
    server.reply({ text: 'partial answer', stopReason: wire });
    expect(
      (await provider.complete({ messages: [{ role: 'user', content: 'hi' }] }, options())).stopReason,
    ).toBe(runtime);
    const events = await collect(provider.stream({ messages: [{ role: 'user', content: 'hi' }] }, options()));
    expect(events.at(-1)).toMatchObject({ type: 'finished', stopReason: runtime });
  });

  test('cache reads count as input tokens', async () => {
    server.reply({ text: 'ok', usage: { input_tokens: 10, output_tokens: 2, cache_read_input_tokens: 90 } });
    const response = await provider.complete({ messages: [{ role: 'user', content: 'hi' }] }, options());
    expect(response.usage).toEqual({ inputTokens: 100, outputTokens: 2 });
    const events = await collect(provider.stream({ messages: [{ role: 'user', content: 'hi' }] }, options()));
    expect(events.at(-1)).toMatchObject({ usage: { inputTokens: 100, outputTokens: 2 } });
  });

  test('no native answer rides along (the gateway would relay it as an OpenAI completion)', async () => {
    expect(
      (await provider.complete({ messages: [{ role: 'user', content: 'hi' }] }, options())).native,
    ).toBeUndefined();
    const events = await collect(provider.stream({ messages: [{ role: 'user', content: 'hi' }] }, options()));
    expect(events.some((event) => 'native' in event)).toBe(false);
  });

  test.each([
    ['overloaded_error', true],
    ['invalid_request_error', false],
  ])('an error event of type %s mid-stream fails the stream, retryable: %s', async (type, retryable) => {
    server.reply({ text: 'half an', streamErrorType: type });
    const error = await collect(
      provider.stream({ messages: [{ role: 'user', content: 'hi' }] }, options()),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).message).toBe(`${server.baseURL} reported an error (${type})`);
    expect((error as ProviderError).retryable).toBe(retryable);
  });

  test('a stream cut before message_stop fails as cut short, retryable', async () => {
    server.reply({ text: 'one two three', cutAfterChunks: 2 });
    const error = await collect(
      provider.stream({ messages: [{ role: 'user', content: 'hi' }] }, options()),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).retryable).toBe(true);
    expect((error as ProviderError).message).toBe(
      `${server.baseURL} ended the stream before the model finished`,
    );
  });
});

describe('options', () => {
  test.each([
    [{ model: '' }, 'model must be a non-empty string, got ""'],
    [{ model: 'm', baseURL: 'ftp://example.com' }, 'baseURL must be an http(s) URL, got "ftp://example.com"'],
    [{ model: 'm', maxTokens: 0 }, 'maxTokens'],
  ])('%j is refused naming the value', (bad, message) => {
    expect(() => new AnthropicProvider(bad)).toThrow(message);
  });

  test('ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY are read when no option is given', async () => {
    vi.stubEnv('ANTHROPIC_BASE_URL', server.baseURL);
    vi.stubEnv('ANTHROPIC_API_KEY', 'sk-ant-from-env');
    const fromEnv = new AnthropicProvider({ model: 'claude-env' });
    expect(fromEnv.endpoint).toBe(server.baseURL);
    await fromEnv.complete({ messages: [{ role: 'user', content: 'hi' }] }, options());
    const { headers } = server.requests.at(-1)!;
    expect(headers['authorization'] ?? headers['x-api-key']).toMatch(/sk-ant-from-env/);
  });

  test('without a key no credential header is sent (a keyless local server)', async () => {
    const keyless = new AnthropicProvider({ baseURL: server.baseURL, model: 'local' });
    await keyless.complete({ messages: [{ role: 'user', content: 'hi' }] }, options());
    const { headers } = server.requests.at(-1)!;
    expect(headers['authorization']).toBeUndefined();
    expect(headers['x-api-key']).toBeUndefined();
  });
});
