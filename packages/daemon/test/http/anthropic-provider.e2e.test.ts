import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  startFakeAnthropicServer,
  type FakeAnthropicServer,
  type FakeMessagesReply,
} from '../../../runtime/test/helpers/fake-anthropic-server.js';
import type { RecordedRequest } from '../../../runtime/test/helpers/fake-openai-server.js';
import { api, openEvents, textPrompt, type SseFrame } from '../helpers/http-client.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

// Issue 29 item 5: the bundled daemon with `--provider anthropic` against a Messages API on
// loopback. The OpenAI-compatible gateway and the built-in chat agent both answer through it.

const terminal = (f: SseFrame): boolean => f.event === 'turn_complete' || f.event === 'turn_error';

/** The text of the last user turn of a Messages body. */
function lastUserText(request: RecordedRequest): string {
  const messages = request.body.messages as { role: string; content: { type: string; text?: string }[] }[];
  const last = messages.filter((m) => m.role === 'user').at(-1);
  return (last?.content ?? []).map((block) => block.text ?? '').join('');
}

/** Answers by the prompt: a tool call when tools are offered, a 429 on "overload", else text. */
function replyTo(request: RecordedRequest): FakeMessagesReply {
  if (Array.isArray(request.body.tools))
    return { toolCalls: [{ id: 'toolu_e2e', name: 'lookup', arguments: '{"q":"sluice"}' }] };
  if (lastUserText(request).includes('overload'))
    return {
      status: 429,
      error: { type: 'rate_limit_error', message: 'slow down' },
      headers: { 'retry-after': '9' },
    };
  return { chunks: ['Hello', ' from', ' Claude'], usage: { input_tokens: 12, output_tokens: 3 } };
}

let fake: FakeAnthropicServer;
let sluice: SluiceProcess;
let client: OpenAI;
beforeAll(async () => {
  fake = await startFakeAnthropicServer({ reply: replyTo });
  sluice = await startSluice(
    ['--provider', 'anthropic', '--model', 'claude-e2e', '--base-url', fake.baseURL, '--token', 'tok-e2e'],
    // --base-url wins over ANTHROPIC_BASE_URL; the key comes from ANTHROPIC_API_KEY.
    { ANTHROPIC_API_KEY: 'sk-ant-e2e', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' },
  );
  client = new OpenAI({ baseURL: `${sluice.url}/v1`, apiKey: 'tok-e2e', maxRetries: 0 });
});
afterAll(async () => {
  await sluice?.stop();
  await fake?.close();
});

describe('--provider anthropic', () => {
  test('a built-in chat agent turn streams the Messages answer and reports its usage', async () => {
    const auth = { headers: { authorization: 'Bearer tok-e2e' } };
    const created = await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread' }, ...auth });
    expect(created.status).toBe(200);
    const { sessionId } = created.body;
    const stream = await openEvents(sluice.url, sessionId, auth);
    const sent = await api(sluice.url, 'POST', `/session/${sessionId}/prompt`, {
      body: textPrompt('hi there'),
      ...auth,
    });
    expect(sent.status).toBe(202);
    const done = await stream.waitFor((f) => terminal(f) && f.data.promptId === sent.body.promptId);
    stream.close();
    expect(done.event).toBe('turn_complete');
    expect(done.data.data.stopReason).toBe('end_turn');
    const chunks = stream.frames
      .filter(
        (f) => f.event === 'session_update' && f.data.data.update.sessionUpdate === 'agent_message_chunk',
      )
      .map((f) => f.data.data.update as { content: { text: string }; _meta?: unknown });
    expect(chunks.map((c) => c.content.text).join('')).toBe('Hello from Claude');
    expect(chunks.at(-1)?._meta).toEqual({ usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15 } });
    const request = fake.requests.at(-1)!;
    expect(request.headers['authorization'] ?? request.headers['x-api-key']).toMatch(/sk-ant-e2e/);
    expect(request.body).toMatchObject({
      model: 'claude-e2e',
      stream: true,
      max_tokens: 4096,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi there' }] }],
    });
  });

  test('the OpenAI-compatible gateway answers whole and streamed through the Messages API', async () => {
    const completion = await client.chat.completions.create({
      model: 'claude-e2e',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello gateway' },
      ],
      max_tokens: 50,
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]).toMatchObject({
      message: { content: 'Hello from Claude' },
      finish_reason: 'stop',
    });
    expect(completion.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 3 });
    expect(fake.requests.at(-1)!.body).toMatchObject({ system: 'Be brief.', max_tokens: 50 });

    const stream = await client.chat.completions.create({
      model: 'claude-e2e',
      messages: [{ role: 'user', content: 'stream it' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe('Hello from Claude');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 3 });
  });

  test("the gateway's tools come back as OpenAI tool calls; an upstream 429 as the client's RateLimitError", async () => {
    const tools: OpenAI.Chat.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } },
    ];
    const completion = await client.chat.completions.create({
      model: 'claude-e2e',
      messages: [{ role: 'user', content: 'look it up' }],
      tools,
      tool_choice: 'required',
    });
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(completion.choices[0]?.message.tool_calls).toEqual([
      { id: 'toolu_e2e', type: 'function', function: { name: 'lookup', arguments: '{"q":"sluice"}' } },
    ]);
    expect(fake.requests.at(-1)!.body).toMatchObject({
      tools: [{ name: 'lookup', input_schema: { type: 'object', properties: {} } }],
      tool_choice: { type: 'any' },
    });

    const refused = await client.chat.completions
      .create({ model: 'claude-e2e', messages: [{ role: 'user', content: 'overload please' }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect(refused).toMatchObject({ status: 429, message: expect.stringContaining('slow down') });
    expect((refused as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe('9');
  });

  test("an agent's large tool schemas, which the gateway keeps as the bytes sent, become Messages tools", async () => {
    const description = `Reads a file of the workspace. ${'Lines are numbered; é is kept. '.repeat(60)}`;
    const parameters = { type: 'object', properties: { path: { type: 'string', description: 'é' } } };
    const tools: OpenAI.Chat.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'read_file', description, parameters } },
    ];
    await client.chat.completions.create({
      model: 'claude-e2e',
      messages: [{ role: 'user', content: 'read it' }],
      tools,
    });
    expect(fake.requests.at(-1)!.body['tools']).toEqual([
      { name: 'read_file', description, input_schema: parameters },
    ]);
  });
});
