import OpenAI, { type APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { OpenAIProvider } from '@sluice/runtime/openai';
import type { ModelRequestRecord, ModelResultRecord } from '@sluice/runtime';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
} from '../../../runtime/test/helpers/fake-openai-server.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// The OpenAI-compatible model gateway (issue 18 §2): the official `openai` client against a real
// daemon on loopback whose runtime calls a fake upstream over HTTP.

let upstream: FakeOpenAIServer;
let sluice: InProcessDaemon;
let client: OpenAI;
const TOKEN = 'daemon-token-for-tests';

beforeAll(async () => {
  upstream = await startFakeOpenAIServer();
  const provider = new OpenAIProvider({
    baseURL: upstream.baseURL,
    apiKey: 'upstream-key',
    model: 'up-model',
  });
  sluice = await startInProcess({}, { provider }, { token: TOKEN });
  client = new OpenAI({ baseURL: `${sluice.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
});
afterAll(async () => {
  await sluice?.stop();
  await upstream?.close();
});

const user = (content: string): OpenAI.Chat.ChatCompletionMessageParam => ({ role: 'user', content });

describe('calls relay to the upstream and back', () => {
  test('a plain call answers with the upstream completion', async () => {
    upstream.reply({ text: 'Hello there' });
    const completion = await client.chat.completions.create({ model: 'up-model', messages: [user('hi')] });
    expect(completion.choices[0]?.message.content).toBe('Hello there');
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(upstream.requests.at(-1)?.headers.authorization).toBe('Bearer upstream-key');
  });

  test('a streamed call delivers the deltas in order and ends', async () => {
    upstream.reply({ text: 'one two three' });
    const stream = await client.chat.completions.create({
      model: 'up-model',
      messages: [user('hi')],
      stream: true,
    });
    let text = '';
    const reasons: (string | null)[] = [];
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.choices[0]?.finish_reason) reasons.push(chunk.choices[0].finish_reason);
    }
    expect(text).toBe('one two three');
    expect(reasons).toEqual(['stop']);
  });

  test('a tool call comes back whole', async () => {
    upstream.reply({ toolCalls: [{ id: 'call_w', name: 'get_weather', arguments: '{"city":"Paris"}' }] });
    const completion = await client.chat.completions.create({
      model: 'up-model',
      messages: [user('weather?')],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
    });
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(completion.choices[0]?.message.tool_calls).toEqual([
      { id: 'call_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    ]);
  });

  test('a tool call streams as deltas the client reassembles', async () => {
    upstream.reply({
      toolCalls: [{ id: 'call_s', name: 'read_file', arguments: '{"path":"a/b.txt"}', argumentChunks: 5 }],
    });
    const stream = client.chat.completions.stream({ model: 'up-model', messages: [user('read')] });
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(completion.choices[0]?.message.tool_calls?.[0]).toMatchObject({
      id: 'call_s',
      function: { name: 'read_file', arguments: '{"path":"a/b.txt"}' },
    });
  });

  test('content parts, tool_choice, response_format, stop, seed, stream_options and unknown fields reach the upstream unchanged', async () => {
    upstream.reply({ text: 'ok' });
    const messages = [
      { role: 'system', content: 'be brief' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'done' },
    ];
    const sent = {
      model: 'up-model',
      messages,
      tools: [{ type: 'function', function: { name: 'f', strict: true, parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
      response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object' } } },
      stop: ['\n\n'],
      seed: 42,
      stream: true,
      stream_options: { include_usage: true },
      vendor_knob: { depth: [1, 2] },
    };
    const stream = await client.chat.completions.create(
      sent as unknown as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
    );
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(upstream.requests.at(-1)?.body).toEqual(sent);
    // include_usage was asked for: the usage chunk comes through
    expect(chunks.at(-1)?.usage).toMatchObject({ completion_tokens: 1 });
  });

  test('without include_usage a streaming client gets no usage chunk', async () => {
    upstream.reply({ text: 'a b' });
    const stream = await client.chat.completions.create({
      model: 'up-model',
      messages: [user('hi')],
      stream: true,
    });
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((chunk) => chunk.choices.length > 0)).toBe(true);
  });

  test('unknown response fields come back, whole and streamed', async () => {
    upstream.reply({ text: 'x', extra: { system_fingerprint: 'fp_1', vendor_meta: { region: 'eu' } } });
    const completion = await client.chat.completions.create({ model: 'up-model', messages: [user('hi')] });
    expect(completion).toMatchObject({ system_fingerprint: 'fp_1', vendor_meta: { region: 'eu' } });
    const stream = await client.chat.completions.create({
      model: 'up-model',
      messages: [user('hi')],
      stream: true,
    });
    for await (const chunk of stream) expect(chunk).toMatchObject({ vendor_meta: { region: 'eu' } });
  });
});

describe('errors answer in OpenAI shape', () => {
  test('upstream 4xx and 5xx keep their status, message and Retry-After', async () => {
    upstream.reply({
      status: 400,
      error: { message: 'model does not support seed', type: 'invalid_request_error', code: 'bad_seed' },
    });
    const bad = (await client.chat.completions
      .create({ model: 'up-model', messages: [user('hi')] })
      .catch((e: unknown) => e)) as APIError;
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect(bad.status).toBe(400);
    expect(bad.error).toMatchObject({ message: 'model does not support seed', code: 'bad_seed' });

    upstream.reply({
      status: 503,
      error: { message: 'upstream overloaded' },
      headers: { 'retry-after': '9' },
    });
    const down = (await client.chat.completions
      .create({ model: 'up-model', messages: [user('hi')], stream: true })
      .catch((e: unknown) => e)) as APIError;
    expect(down.status).toBe(503);
    expect(down.message).toContain('upstream overloaded');
    expect(down.headers?.get('retry-after')).toBe('9');
  });

  test('a malformed body is a 400 naming what to fix', async () => {
    const error = (await client.chat.completions
      .create({ model: 'up-model', messages: [] })
      .catch((e: unknown) => e)) as APIError;
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ code: 'invalid_chat_request', type: 'invalid_request_error' });
    expect(error.message).toContain('messages');
    const notJson = await fetch(`${sluice.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{"model":',
    });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({
      error: { type: 'invalid_request_error', message: expect.any(String) },
    });
  });

  test('no token is a 401 when the daemon has a token', async () => {
    const anonymous = new OpenAI({ baseURL: `${sluice.url}/v1`, apiKey: 'wrong', maxRetries: 0 });
    const error = (await anonymous.chat.completions
      .create({ model: 'up-model', messages: [user('hi')] })
      .catch((e: unknown) => e)) as APIError;
    expect(error.status).toBe(401);
  });
});

describe('session credentials attribute calls', () => {
  test('a call with a session credential is journaled with the session and prompt ids, and refused after revoke', async () => {
    const { credentials } = sluice.daemon;
    const token = credentials.issue('sess-attr');
    const turn = new AbortController();
    credentials.beginTurn('sess-attr', 'prompt-7', turn.signal);
    const agent = new OpenAI({ baseURL: `${sluice.url}/v1`, apiKey: token, maxRetries: 0 });
    upstream.reply({ toolCalls: [{ name: 'ls', arguments: '{}' }] });
    await agent.chat.completions.create({ model: 'up-model', messages: [user('attributed')] });
    credentials.endTurn('sess-attr', 'prompt-7');

    const records = await sluice.daemon.journal.recordsForSession!('sess-attr');
    const request = records.find((r) => r.type === 'model_request') as ModelRequestRecord;
    const result = records.find((r) => r.type === 'model_result') as ModelResultRecord;
    expect(request).toMatchObject({ sessionId: 'sess-attr', turnId: 'prompt-7' });
    expect(result).toMatchObject({
      sessionId: 'sess-attr',
      stopReason: 'tool_calls',
      toolCalls: [{ name: 'ls' }],
    });

    const listed = await fetch(`${sluice.url}/session/sess-attr/prompts/prompt-7/calls`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(await listed.json()).toMatchObject({
      calls: [{ callId: request.callId, outcome: 'success', stopReason: 'tool_calls', toolCalls: ['ls'] }],
    });

    credentials.revoke('sess-attr');
    const refused = (await agent.chat.completions
      .create({ model: 'up-model', messages: [user('late')] })
      .catch((e: unknown) => e)) as APIError;
    expect(refused.status).toBe(401);
  });

  test('an in-flight call shows its session and prompt in /runtime/snapshot, and the turn abort cancels it', async () => {
    const { credentials } = sluice.daemon;
    const token = credentials.issue('sess-snap');
    const turn = new AbortController();
    credentials.beginTurn('sess-snap', 'prompt-9', turn.signal);
    const agent = new OpenAI({ baseURL: `${sluice.url}/v1`, apiKey: token, maxRetries: 0 });
    upstream.reply({ hang: true });
    const pending = agent.chat.completions
      .create({ model: 'up-model', messages: [user('hang')] })
      .catch((e: unknown) => e);
    const snapshot = async (): Promise<unknown[]> => {
      const res = await fetch(`${sluice.url}/runtime/snapshot`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      return ((await res.json()) as { jobs: unknown[] }).jobs;
    };
    await expect
      .poll(snapshot)
      .toEqual([expect.objectContaining({ sessionId: 'sess-snap', turnId: 'prompt-9', phase: 'Executing' })]);
    turn.abort();
    const error = (await pending) as APIError;
    expect(error.error).toMatchObject({ code: 'model_cancelled' });
    await expect.poll(snapshot).toEqual([]);
    credentials.revoke('sess-snap');
  });
});

describe('the runtime bounds gateway calls', () => {
  let tight: InProcessDaemon;
  /** Calls the scheduler refused (SCH-14), counted by its observer. */
  let refusals = 0;
  let hanging: FakeOpenAIServer;
  let open: OpenAI;
  beforeAll(async () => {
    hanging = await startFakeOpenAIServer({ reply: { hang: true } });
    const provider = new OpenAIProvider({ baseURL: hanging.baseURL, apiKey: 'k', model: 'up-model' });
    // no daemon token: an open loopback daemon
    tight = await startInProcess(
      { modelMaxConcurrency: 1, modelMaxQueued: 0, modelMaxRequestBytes: 4000 },
      { provider, schedulerObserver: { rejected: () => void refusals++ } },
    );
    open = new OpenAI({ baseURL: `${tight.url}/v1`, apiKey: 'anything', maxRetries: 0 });
  });
  afterAll(async () => {
    await tight?.stop();
    await hanging?.close();
  });

  const executing = async (): Promise<number> =>
    ((await (await fetch(`${tight.url}/runtime/snapshot`)).json()) as { executing: number }).executing;
  /** Calls of running turns waiting in the runtime for room (docs/decisions/029). */
  const waitingCalls = async (): Promise<number> =>
    ((await (await fetch(`${tight.url}/runtime/snapshot`)).json()) as { waiting: number }).waiting;

  test('SCH-14 a call that finds the one slot taken and no queue is a 429 with Retry-After and our code', async () => {
    const holder = new AbortController();
    const held = open.chat.completions
      .create({ model: 'up-model', messages: [user('hold')] }, { signal: holder.signal })
      .catch(() => undefined);
    await expect.poll(executing).toBe(1);
    const refused = (await open.chat.completions
      .create({ model: 'up-model', messages: [user('no room')] })
      .catch((e: unknown) => e)) as APIError;
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect(refused.headers?.get('retry-after')).toBe('1');
    expect(refused.error).toMatchObject({ code: 'model_overloaded', type: 'rate_limit_error' });
    expect(typeof (refused.error as { message?: unknown }).message).toBe('string');
    // the client going away cancels its call: the slot frees
    holder.abort();
    await held;
    await expect.poll(executing).toBe(0);
  });

  test('issue 19 item 10: a call for a running turn (session credential) waits for the slot instead of a 429', async () => {
    // The upstream holds calls that say "hold" and answers the rest at once.
    hanging.reply((request) => {
      const messages = request.body['messages'] as Array<{ content?: unknown }>;
      return messages.at(-1)?.content === 'hold' ? { hang: true } : { text: 'after the wait' };
    });
    const holder = new AbortController();
    const held = open.chat.completions
      .create({ model: 'up-model', messages: [user('hold')] }, { signal: holder.signal })
      .catch(() => undefined);
    await expect.poll(executing).toBe(1);
    const { credentials } = tight.daemon;
    const before = refusals;
    const token = credentials.issue('sess-wait');
    const turn = new AbortController();
    credentials.beginTurn('sess-wait', 'prompt-wait', turn.signal);
    try {
      const agent = new OpenAI({ baseURL: `${tight.url}/v1`, apiKey: token, maxRetries: 0 });
      const waiting = agent.chat.completions.create({ model: 'up-model', messages: [user('my turn')] });
      const streamed = agent.chat.completions.create({
        model: 'up-model',
        messages: [user('my turn, streamed')],
        stream: true,
      });
      // Both found the one slot taken and no queue, and wait in the runtime; neither got a 429
      // (docs/decisions/029: no longer a refusal and a retry, so the count is exact).
      await expect.poll(waitingCalls).toBe(2);
      expect(refusals - before).toBe(0);
      holder.abort();
      await held;
      await expect(waiting).resolves.toMatchObject({
        choices: [{ message: { content: 'after the wait' } }],
      });
      let text = '';
      for await (const chunk of await streamed) text += chunk.choices[0]?.delta?.content ?? '';
      expect(text).toBe('after the wait');
    } finally {
      credentials.endTurn('sess-wait', 'prompt-wait');
      credentials.revoke('sess-wait');
      hanging.reply({ hang: true });
      await expect.poll(executing).toBe(0);
    }
  });

  test('a call for a turn that ends while it waits for capacity stops waiting', async () => {
    const holder = new AbortController();
    const held = open.chat.completions
      .create({ model: 'up-model', messages: [user('hold')] }, { signal: holder.signal })
      .catch(() => undefined);
    await expect.poll(executing).toBe(1);
    const { credentials } = tight.daemon;
    const token = credentials.issue('sess-gone');
    const turn = new AbortController();
    credentials.beginTurn('sess-gone', 'prompt-gone', turn.signal);
    try {
      const agent = new OpenAI({ baseURL: `${tight.url}/v1`, apiKey: token, maxRetries: 0 });
      const waiting = agent.chat.completions
        .create({ model: 'up-model', messages: [user('my turn')] })
        .catch((e: unknown) => e);
      await expect.poll(waitingCalls).toBe(1);
      turn.abort(); // the prompt was cancelled: its calls stop waiting
      const error = (await waiting) as APIError;
      expect(error).toBeInstanceOf(OpenAI.APIError);
      // It never ran: the one slot is still the holder's.
      expect(await executing()).toBe(1);
      expect(error.status).toBeGreaterThanOrEqual(400);
    } finally {
      credentials.endTurn('sess-gone', 'prompt-gone');
      credentials.revoke('sess-gone');
      holder.abort();
      await held;
      await expect.poll(executing).toBe(0);
    }
  });

  test('a streaming client that disconnects mid-stream cancels its call', async () => {
    hanging.reply({ chunks: ['a', 'b', 'c'], hangAfterChunks: 1 });
    const controller = new AbortController();
    const stream = await open.chat.completions.create(
      { model: 'up-model', messages: [user('stream')], stream: true },
      { signal: controller.signal },
    );
    for await (const chunk of stream) {
      expect(chunk.choices[0]?.delta).toBeDefined();
      break;
    }
    await expect.poll(executing).toBe(0);
    hanging.reply({ hang: true });
  });

  test('SCH-17 a request larger than maxRequestBytes is a 413; extra fields count', async () => {
    const before = hanging.requestCount;
    const error = (await open.chat.completions
      .create({ model: 'up-model', messages: [user('hi')], metadata: { pad: 'x'.repeat(5000) } })
      .catch((e: unknown) => e)) as APIError;
    expect(error.status).toBe(413);
    expect(error.error).toMatchObject({ code: 'request_too_large' });
    expect(hanging.requestCount).toBe(before); // it never reached the upstream
  });

  test('a session credential that is not live is a 401 even on an open loopback daemon', async () => {
    const stale = new OpenAI({ baseURL: `${tight.url}/v1`, apiKey: 'sluice-sess-not-issued', maxRetries: 0 });
    const error = (await stale.chat.completions
      .create({ model: 'up-model', messages: [user('hi')] })
      .catch((e: unknown) => e)) as APIError;
    expect(error.status).toBe(401);
  });

  test('/v1/models lists the provider default model', async () => {
    const models = await open.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['up-model']);
  });
});
