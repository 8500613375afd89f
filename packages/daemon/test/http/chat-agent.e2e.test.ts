import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
} from '../../../runtime/test/helpers/fake-openai-server.js';
import { api, openEvents, textPrompt, type EventStream, type SseFrame } from '../helpers/http-client.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

// The built-in chat agent behind the started CLI (issue 3, "The built-in chat agent"): a turn
// goes through the runtime's gateway, a runtime refusal ends it with turn_error carrying the
// runtime's code, and --provider openai talks to an OpenAI-compatible endpoint.

const terminal = (f: SseFrame): boolean => f.event === 'turn_complete' || f.event === 'turn_error';

async function session(base: string): Promise<{ sessionId: string; stream: EventStream }> {
  const res = await api(base, 'POST', '/session', { body: { sessionScope: 'thread' } });
  expect(res.status).toBe(200);
  return { sessionId: res.body.sessionId, stream: await openEvents(base, res.body.sessionId) };
}

async function prompt(base: string, sessionId: string, text: string): Promise<string> {
  const res = await api(base, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt(text) });
  expect(res.status).toBe(202);
  return res.body.promptId;
}

describe('runtime refusals end the turn with turn_error and the runtime code', () => {
  let sluice: SluiceProcess;
  beforeAll(async () => {
    // one slot, no queue, a small request bound, a slow echo model: easy to overload
    sluice = await startSluice([
      '--model-max-concurrency',
      '1',
      '--model-max-queued',
      '0',
      '--model-max-request-bytes',
      '2000',
      '--echo-delay-ms',
      '60000',
      '--drain-timeout-ms',
      '0',
    ]);
  });
  afterAll(async () => {
    await sluice?.stop();
  });

  test('SCH-14 a prompt larger than --model-max-request-bytes ends turn_error request_too_large; the session goes on', async () => {
    const { sessionId, stream } = await session(sluice.url);
    const promptId = await prompt(sluice.url, sessionId, 'x'.repeat(5000));
    const done = await stream.waitFor((f) => terminal(f) && f.data.promptId === promptId);
    expect(done.event).toBe('turn_error');
    expect(done.data.data).toMatchObject({ sessionId, promptId, code: 'request_too_large' });
    expect(done.data.data.message).toEqual(expect.any(String));
    // the FIFO is not poisoned: the slot was never taken, the next prompt is admitted and runs
    const next = await prompt(sluice.url, sessionId, 'small');
    await stream.waitFor((f) => f.event === 'session_update' && f.data.promptId === next);
    expect((await api(sluice.url, 'POST', `/session/${sessionId}/cancel`)).status).toBe(204);
    await stream.waitFor((f) => terminal(f) && f.data.promptId === next);
    stream.close();
  });

  test('SCH-14 + issue 19 item 10: a turn whose model call finds the one slot taken waits for it, then runs', async () => {
    const busy = await session(sluice.url);
    const holding = await prompt(sluice.url, busy.sessionId, 'hold the slot');
    await expect.poll(async () => (await api(sluice.url, 'GET', '/runtime/snapshot')).body.executing).toBe(1);
    const other = await session(sluice.url);
    const waiting = await prompt(sluice.url, other.sessionId, 'no room yet');
    // The runtime refuses the call (model_overloaded, 1 s Retry-After); the turn waits instead of
    // failing: the prompt stays pending and no terminal event comes.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(other.stream.frames.some((f) => terminal(f) && f.data.promptId === waiting)).toBe(false);
    const pending = await api(sluice.url, 'GET', `/session/${other.sessionId}/pending-prompts`);
    expect(pending.body.pendingPrompts.map((p: { promptId: string }) => p.promptId)).toEqual([waiting]);
    // The slot frees: the waiting turn's call gets it.
    await api(sluice.url, 'POST', `/session/${busy.sessionId}/cancel`);
    await busy.stream.waitFor((f) => terminal(f) && f.data.promptId === holding);
    await expect
      .poll(async () => (await api(sluice.url, 'GET', '/runtime/snapshot')).body.jobs?.[0]?.sessionId, {
        timeout: 5_000,
      })
      .toBe(other.sessionId);
    await api(sluice.url, 'POST', `/session/${other.sessionId}/cancel`);
    const done = await other.stream.waitFor((f) => terminal(f) && f.data.promptId === waiting);
    expect(done.data.data).toMatchObject({ stopReason: 'cancelled' });
    busy.stream.close();
    other.stream.close();
  });

  test('SCH-11 /runtime/snapshot shows the running call without the prompt text', async () => {
    const { sessionId, stream } = await session(sluice.url);
    const secret = 'the-prompt-text-must-not-leak-4711';
    const promptId = await prompt(sluice.url, sessionId, secret);
    // The call executes once its request record is confirmed (SCH-9): wait for that state.
    await expect.poll(async () => (await api(sluice.url, 'GET', '/runtime/snapshot')).body.executing).toBe(1);
    const snapshot = await api(sluice.url, 'GET', '/runtime/snapshot');
    expect(snapshot.body).toMatchObject({
      accepting: true,
      executing: 1,
      jobs: [{ phase: 'Executing', sessionId, requestRecorded: true }],
    });
    expect(snapshot.text).not.toContain(secret);
    await api(sluice.url, 'POST', `/session/${sessionId}/cancel`);
    await stream.waitFor((f) => terminal(f) && f.data.promptId === promptId);
    stream.close();
  });
});

describe('--provider openai against an OpenAI-compatible endpoint on loopback', () => {
  let fake: FakeOpenAIServer;
  beforeAll(async () => {
    fake = await startFakeOpenAIServer({
      reply: { chunks: ['Hello', ' from', ' the fake'], usage: { prompt_tokens: 11, completion_tokens: 3 } },
    });
  });
  afterAll(async () => {
    await fake?.close();
  });

  async function turn(sluice: SluiceProcess, text: string): Promise<SseFrame[]> {
    const { sessionId, stream } = await session(sluice.url);
    const promptId = await prompt(sluice.url, sessionId, text);
    const done = await stream.waitFor((f) => terminal(f) && f.data.promptId === promptId);
    stream.close();
    expect(done.event).toBe('turn_complete');
    expect(done.data.data.stopReason).toBe('end_turn');
    return stream.frames.filter((f) => f.data.promptId === promptId);
  }

  test('--base-url, --model and OPENAI_API_KEY: the turn streams the endpoint answer and reports its usage', async () => {
    const sluice = await startSluice(
      ['--provider', 'openai', '--model', 'qwen-test', '--base-url', fake.baseURL],
      { OPENAI_API_KEY: 'sk-from-env', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' },
    );
    try {
      const before = fake.requestCount;
      const frames = await turn(sluice, 'hi there');
      const updates = frames
        .filter((f) => f.event === 'session_update')
        .map(
          (f) => f.data.data.update as { sessionUpdate: string; content: { text: string }; _meta?: unknown },
        );
      expect(updates[0]).toMatchObject({
        sessionUpdate: 'user_message_chunk',
        content: { text: 'hi there' },
      });
      const chunks = updates.filter((u) => u.sessionUpdate === 'agent_message_chunk');
      expect(chunks.map((u) => u.content.text).join('')).toBe('Hello from the fake');
      expect(chunks.at(-1)?._meta).toEqual({ usage: { inputTokens: 11, outputTokens: 3, totalTokens: 14 } });
      // --base-url wins over OPENAI_BASE_URL; the key comes from OPENAI_API_KEY
      expect(fake.requestCount).toBe(before + 1);
      const request = fake.requests.at(-1)!;
      expect(request.headers.authorization).toBe('Bearer sk-from-env');
      expect(request.body).toMatchObject({
        model: 'qwen-test',
        stream: true,
        messages: [{ role: 'user', content: 'hi there' }],
      });
    } finally {
      expect(await sluice.stop()).toBe(0);
    }
  });

  test('without --base-url the endpoint comes from OPENAI_BASE_URL', async () => {
    const sluice = await startSluice(['--provider', 'openai', '--model', 'qwen-env'], {
      OPENAI_API_KEY: 'sk-2',
      OPENAI_BASE_URL: fake.baseURL,
    });
    try {
      const frames = await turn(sluice, 'via env');
      expect(frames.some((f) => f.event === 'session_update')).toBe(true);
      expect(fake.requests.at(-1)).toMatchObject({
        headers: { authorization: 'Bearer sk-2' },
        body: { model: 'qwen-env' },
      });
    } finally {
      expect(await sluice.stop()).toBe(0);
    }
  });

  test('an endpoint failure ends the turn with turn_error carrying a code, not a hang', async () => {
    const failing = await startFakeOpenAIServer({ reply: { status: 400, error: { message: 'bad model' } } });
    const sluice = await startSluice(['--provider', 'openai', '--model', 'm', '--base-url', failing.baseURL]);
    try {
      const { sessionId, stream } = await session(sluice.url);
      const promptId = await prompt(sluice.url, sessionId, 'fail please');
      const done = await stream.waitFor((f) => terminal(f) && f.data.promptId === promptId);
      stream.close();
      expect(done.event).toBe('turn_error');
      expect(done.data.data.code).toEqual(expect.any(String));
    } finally {
      await sluice.stop();
      await failing.close();
    }
  });
});
