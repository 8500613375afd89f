import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { ModelRuntime } from '../src/gateway/model-runtime.js';
import { MemoryJournal } from '../src/journal/memory-journal.js';
import type { ModelResultRecord } from '../src/journal/records.js';
import { OpenAIProvider, ProviderError } from '../src/openai.js';
import type { GenerationRequest, ModelStreamEvent, ProviderCallOptions } from '../src/types.js';

/**
 * A real HTTP server on 127.0.0.1 whose answers are written by hand, for replies the shared
 * fake server cannot produce: a stream that ends early, a non-SSE body, a streamed refusal.
 */
type Handler = (res: ServerResponse, body: Record<string, unknown>) => void;

let baseURL: string;
let handler: Handler;
let stop: () => Promise<void>;

beforeEach(async () => {
  vi.stubEnv('OPENAI_BASE_URL', '');
  vi.stubEnv('OPENAI_API_KEY', '');
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () =>
      handler(res, JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
});

afterEach(async () => {
  vi.unstubAllEnvs();
  await stop();
});

const request: GenerationRequest = { messages: [{ role: 'user', content: 'Tell me a long story' }] };
const callOptions = (): ProviderCallOptions => ({ signal: new AbortController().signal, timeoutMs: 10_000 });

function sse(choices: unknown[], extra: Record<string, unknown> = {}): string {
  const chunk = {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices,
    ...extra,
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** Sends the first words of an answer, then ends the response cleanly: no finish_reason, no [DONE]. */
const cutAfterFirstDelta: Handler = (res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(sse([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
  res.write(sse([{ index: 0, delta: { content: 'Once upon a' }, finish_reason: null }]));
  res.end();
};

async function outcome(
  events: AsyncIterable<ModelStreamEvent>,
): Promise<{ events: ModelStreamEvent[]; error?: unknown }> {
  const seen: ModelStreamEvent[] = [];
  try {
    // The typed view: chunks that carry nothing typed (`raw`) left out, `native` stripped.
    for await (const event of events) {
      if (event.type === 'raw') continue;
      const { native: _native, ...rest } = event as ModelStreamEvent & { native?: unknown };
      seen.push(rest as ModelStreamEvent);
    }
  } catch (error) {
    return { events: seen, error };
  }
  return { events: seen };
}

describe('OpenAIProvider.stream: an answer is finished only when the model says so', () => {
  test('a stream that ends before any finish_reason is a retryable ProviderError, not a finished answer', async () => {
    handler = cutAfterFirstDelta;
    const provider = new OpenAIProvider({ baseURL, apiKey: 'k', model: 'm' });
    const { events, error } = await outcome(provider.stream(request, callOptions()));
    expect(events).toEqual([{ type: 'delta', text: 'Once upon a' }]);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ retryable: true });
  });

  test('a 200 answer that is not an event stream (wrong base URL, proxy page) fails like complete() does', async () => {
    handler = (res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Welcome to the web UI</body></html>');
    };
    const provider = new OpenAIProvider({ baseURL, apiKey: 'k', model: 'm' });
    await expect(provider.complete(request, callOptions())).rejects.toBeInstanceOf(ProviderError);
    const { events, error } = await outcome(provider.stream(request, callOptions()));
    expect(events).toEqual([]);
    expect(error).toBeInstanceOf(ProviderError);
  });

  test('through the runtime, a cut stream is recorded and delivered as an error, never as a finished answer', async () => {
    handler = cutAfterFirstDelta;
    const journal = new MemoryJournal();
    const runtime = new ModelRuntime({
      provider: new OpenAIProvider({ baseURL, apiKey: 'k', model: 'm' }),
      journal,
    });
    const { events, error } = await outcome(runtime.stream(request));
    await runtime.shutdown();
    expect(events.map((event) => event.type)).toEqual(['delta']);
    expect(error).toMatchObject({ code: 'model_provider_error', retryable: true });
    const result = journal.records().find((r) => r.type === 'model_result') as ModelResultRecord;
    expect(result.outcome).toBe('error');
  });

  test('a server that never names a finish reason but sends the closing usage chunk still ends the answer', async () => {
    handler = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse([{ index: 0, delta: { content: 'Once upon a time.' }, finish_reason: null }]));
      res.write(sse([], { usage: { prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 } }));
      res.end('data: [DONE]\n\n');
    };
    const provider = new OpenAIProvider({ baseURL, apiKey: 'k', model: 'm' });
    const { events, error } = await outcome(provider.stream(request, callOptions()));
    expect(error).toBeUndefined();
    expect(events.at(-1)).toEqual({
      type: 'finished',
      stopReason: 'end_turn',
      usage: { inputTokens: 4, outputTokens: 4 },
    });
  });

  test('a streamed refusal reaches the caller as text with stopReason refusal, as complete() reports it', async () => {
    const refusal = "I'm sorry, I can't help with that.";
    handler = (res, body) => {
      if (body.stream !== true) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'chatcmpl-1',
            object: 'chat.completion',
            created: 1,
            model: 'm',
            choices: [
              { index: 0, message: { role: 'assistant', content: null, refusal }, finish_reason: 'stop' },
            ],
            usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 },
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        sse([{ index: 0, delta: { role: 'assistant', content: null, refusal: '' }, finish_reason: null }]),
      );
      res.write(sse([{ index: 0, delta: { refusal: "I'm sorry, " }, finish_reason: null }]));
      res.write(sse([{ index: 0, delta: { refusal: "I can't help with that." }, finish_reason: null }]));
      res.write(sse([{ index: 0, delta: {}, finish_reason: 'stop' }]));
      res.write(sse([], { usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 } }));
      res.end('data: [DONE]\n\n');
    };
    const provider = new OpenAIProvider({ baseURL, apiKey: 'k', model: 'm' });
    const complete = await provider.complete(request, callOptions());
    expect(complete).toMatchObject({
      text: refusal,
      stopReason: 'refusal',
      usage: { inputTokens: 5, outputTokens: 9 },
    });
    const { events, error } = await outcome(provider.stream(request, callOptions()));
    expect(error).toBeUndefined();
    const text = events.flatMap((event) => (event.type === 'delta' ? [event.text] : [])).join('');
    expect(text).toBe(refusal);
    expect(events.at(-1)).toEqual({
      type: 'finished',
      stopReason: 'refusal',
      usage: { inputTokens: 5, outputTokens: 9 },
    });
  });
});
