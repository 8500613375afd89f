import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, vi } from 'vitest';
import { AnthropicProvider } from '../src/anthropic.js';
import { OpenAIProvider } from '../src/openai.js';
import { EchoProvider, estimateTokens } from '../src/providers/echo-provider.js';
import { contentText, type GenerationRequest } from '../src/types.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from './helpers/fake-anthropic-server.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from './helpers/fake-openai-server.js';
import { ALL_CASES, describeProviderContract, type ScriptedAnswer } from './helpers/provider-contract.js';

// Issue 29 item 6: one contract, three providers. Echo runs what applies to a model without an
// upstream that never calls tools; the two HTTP providers run every case against a real server
// on loopback speaking their wire (chat completions; the Messages API with its SSE events).

/** A loopback port that was free a moment ago, so a connection to it is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const words = (text: string): string[] => text.match(/\s*\S+\s*/g) ?? [];

let openai: FakeOpenAIServer;
let anthropic: FakeAnthropicServer;
let refusedPort: number;
beforeAll(async () => {
  [openai, anthropic, refusedPort] = await Promise.all([
    startFakeOpenAIServer(),
    startFakeAnthropicServer(),
    closedPort(),
  ]);
});
afterAll(async () => {
  await Promise.all([openai?.close(), anthropic?.close()]);
});
beforeEach(() => {
  // The providers would read these when an option is absent; the subjects pass every one.
  vi.stubEnv('OPENAI_API_KEY', '');
  vi.stubEnv('ANTHROPIC_API_KEY', '');
  return () => vi.unstubAllEnvs();
});

let echoStalls = false;
describeProviderContract('the echo model', {
  cases: ['complete', 'stream', 'tool-history', 'cancel'],
  create: (clock) => {
    const stalls = echoStalls;
    echoStalls = false;
    // Stalled: a minute between deltas on a clock nobody advances.
    return new EchoProvider({ clock, chunkSize: 8, chunkDelayMs: stalls ? 60_000 : 0 });
  },
  answer: (_script, request: GenerationRequest): ScriptedAnswer => {
    const last = request.messages.filter((m) => m.role === 'user').at(-1);
    const text = `Echo: ${contentText(last?.content ?? '')}`;
    const inputTokens = request.messages.reduce((sum, m) => sum + estimateTokens(contentText(m.content)), 0);
    return { text, usage: { inputTokens, outputTokens: estimateTokens(text) } };
  },
  stall: () => {
    echoStalls = true;
  },
});

describeProviderContract('the OpenAI-compatible provider', {
  cases: ALL_CASES,
  create: (clock) =>
    new OpenAIProvider({ baseURL: openai.baseURL, apiKey: 'sk-contract', model: 'gpt-test', clock }),
  answer: (script) => {
    openai.reply({
      text: script.text,
      chunks: words(script.text),
      usage: { prompt_tokens: script.usage.inputTokens, completion_tokens: script.usage.outputTokens },
      ...(script.toolCalls ? { toolCalls: script.toolCalls } : {}),
    });
    return script;
  },
  stall: () => openai.reply({ text: 'one two three', hangAfterChunks: 1 }),
  hang: () => openai.reply({ hang: true }),
  fail: ({ status, message, retryAfter }) =>
    openai.reply({
      status,
      error: { message },
      ...(retryAfter ? { headers: { 'retry-after': retryAfter } } : {}),
    }),
  refused: () => new OpenAIProvider({ baseURL: `http://127.0.0.1:${refusedPort}/v1`, model: 'gpt-test' }),
  openResponses: () => openai.openResponses,
});

describeProviderContract('the Anthropic provider', {
  cases: ALL_CASES,
  create: (clock) =>
    new AnthropicProvider({
      baseURL: anthropic.baseURL,
      apiKey: 'sk-ant-contract',
      model: 'claude-test',
      clock,
    }),
  answer: (script) => {
    anthropic.reply({
      text: script.text,
      chunks: words(script.text),
      usage: { input_tokens: script.usage.inputTokens, output_tokens: script.usage.outputTokens },
      ...(script.toolCalls ? { toolCalls: script.toolCalls } : {}),
    });
    return script;
  },
  stall: () => anthropic.reply({ text: 'one two three', hangAfterChunks: 1 }),
  hang: () => anthropic.reply({ hang: true }),
  fail: ({ status, message, retryAfter }) =>
    anthropic.reply({
      status,
      error: { type: status === 429 ? 'rate_limit_error' : 'api_error', message },
      ...(retryAfter ? { headers: { 'retry-after': retryAfter } } : {}),
    }),
  refused: () => new AnthropicProvider({ baseURL: `http://127.0.0.1:${refusedPort}`, model: 'claude-test' }),
  openResponses: () => anthropic.openResponses,
});
