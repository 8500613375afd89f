import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { api, openEvents, textPrompt, type EventStream } from '../helpers/http-client.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// Issue 21: durable budgets over HTTP (a real daemon on loopback, SQLite file, echo model).

let sluice: InProcessDaemon;
let url: string;

beforeAll(async () => {
  sluice = await startInProcess();
  url = sluice.url;
});
afterAll(async () => {
  await sluice?.stop();
});

async function newSession(): Promise<string> {
  const created = await api(url, 'POST', '/session', { body: { sessionScope: 'thread' } });
  return created.body.sessionId as string;
}

/** Sends a prompt and waits for its terminal event; returns the event and the prompt id. */
async function runPrompt(
  sessionId: string,
  text: string,
  budgetId?: string,
): Promise<{ promptId: string; event: string; code?: string }> {
  const events: EventStream = await openEvents(url, sessionId);
  try {
    const sent = await api(url, 'POST', `/session/${sessionId}/prompt`, {
      body: { ...textPrompt(text), ...(budgetId === undefined ? {} : { budgetId }) },
    });
    expect(sent.status).toBe(202);
    const promptId = sent.body.promptId as string;
    const end = await events.waitFor(
      (f) => (f.event === 'turn_complete' || f.event === 'turn_error') && f.data.promptId === promptId,
    );
    return { promptId, event: end.event, code: end.data.data?.code };
  } finally {
    events.close();
  }
}

describe('POST /budgets creates a durable budget', () => {
  test('answers 201 with the limits and nothing spent; an id is generated when none is given', async () => {
    const created = await api(url, 'POST', '/budgets', {
      body: { limits: { maxCalls: 3, maxCostMinor: 50 } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      budgetId: expect.stringMatching(/^budget-/),
      limits: { maxCalls: 3, maxCostMinor: 50 },
      spent: { calls: 0, inputTokens: 0, outputTokens: 0, costMinor: 0, activityMs: 0 },
    });
    const read = await api(url, 'GET', `/budgets/${created.body.budgetId}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
  });

  test('a limit that is not a non-negative integer is a 400 naming the field and quoting the value', async () => {
    const refused = await api(url, 'POST', '/budgets', { body: { limits: { maxCalls: -2 } } });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      code: 'invalid_budget',
      error: 'limits.maxCalls must be a non-negative integer, got -2',
    });
  });

  test('an unknown limit is a 400 listing the known ones', async () => {
    const refused = await api(url, 'POST', '/budgets', { body: { limits: { maxDollars: 5 } } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/limits\.maxDollars is not a budget limit; use maxCalls, /);
  });

  test('a malformed budget id is a 400', async () => {
    const refused = await api(url, 'POST', '/budgets', { body: { budgetId: 'tmp-abc' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/^budgetId must be 1 to 128 letters.*got "tmp-abc"$/);
  });

  test('creating an id that exists is a 409 budget_exists', async () => {
    expect((await api(url, 'POST', '/budgets', { body: { budgetId: 'dup-1' } })).status).toBe(201);
    const again = await api(url, 'POST', '/budgets', {
      body: { budgetId: 'dup-1', limits: { maxCalls: 1 } },
    });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'budget_exists', budgetId: 'dup-1' });
  });

  test('reading an unknown budget is a 404 budget_not_found', async () => {
    const missing = await api(url, 'GET', '/budgets/no-such-budget');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'budget_not_found', budgetId: 'no-such-budget' });
  });
});

describe('prompts sent with a budgetId are charged to it', () => {
  test('an unknown budgetId is refused 404 at admission, and no prompt is queued', async () => {
    const sessionId = await newSession();
    const refused = await api(url, 'POST', `/session/${sessionId}/prompt`, {
      body: { ...textPrompt('hi'), budgetId: 'never-created' },
    });
    expect(refused.status).toBe(404);
    expect(refused.body.code).toBe('budget_not_found');
    const pending = await api(url, 'GET', `/session/${sessionId}/pending-prompts`);
    expect(pending.body.pendingPrompts).toEqual([]);
  });

  test('the turns’ calls and tokens add up across sessions; the budget then refuses with budget_exhausted', async () => {
    await api(url, 'POST', '/budgets', { body: { budgetId: 'two-calls', limits: { maxCalls: 2 } } });
    const [a, b] = [await newSession(), await newSession()];
    expect((await runPrompt(a, 'one two three', 'two-calls')).event).toBe('turn_complete');
    expect((await runPrompt(b, 'four five', 'two-calls')).event).toBe('turn_complete');
    const state = await api(url, 'GET', '/budgets/two-calls');
    // Echo counts words: the prompts' (3, 2) in, "Echo: " and the prompts' out.
    expect(state.body).toMatchObject({
      spent: { calls: 2, inputTokens: 5, outputTokens: 7 },
      stoppedReason: 'calls',
    });
    const third = await runPrompt(a, 'six', 'two-calls');
    expect(third).toMatchObject({ event: 'turn_error', code: 'budget_exhausted' });
    expect((await api(url, 'GET', '/budgets/two-calls')).body.spent.calls).toBe(2);
  });
});

describe('model-gateway calls are charged to a budget', () => {
  const chat = { messages: [{ role: 'user', content: 'ping pong' }] };

  test('X-Sluice-Budget charges the call; past the limit the gateway answers 429 budget_exhausted', async () => {
    await api(url, 'POST', '/budgets', { body: { budgetId: 'gw-1', limits: { maxCalls: 1 } } });
    const headers = { 'x-sluice-budget': 'gw-1' };
    expect((await api(url, 'POST', '/v1/chat/completions', { body: chat, headers })).status).toBe(200);
    const refused = await api(url, 'POST', '/v1/chat/completions', { body: chat, headers });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('budget_exhausted');
    expect((await api(url, 'GET', '/budgets/gw-1')).body.spent).toMatchObject({ calls: 1, inputTokens: 2 });
  });

  test('an unknown X-Sluice-Budget is a 404 in OpenAI’s error shape', async () => {
    const missing = await api(url, 'POST', '/v1/chat/completions', {
      body: chat,
      headers: { 'x-sluice-budget': 'gw-missing' },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'budget_not_found', type: 'invalid_request_error' });
  });

  test('a session credential’s call during a budgeted turn is charged to the turn’s budget, which a header cannot change', async () => {
    await api(url, 'POST', '/budgets', { body: { budgetId: 'turn-budget' } });
    await api(url, 'POST', '/budgets', { body: { budgetId: 'other-budget' } });
    const { credentials } = sluice.daemon;
    const token = credentials.issue('sess-budget');
    const turn = new AbortController();
    credentials.beginTurn('sess-budget', 'prompt-b1', turn.signal, 'turn-budget');
    try {
      const auth = { authorization: `Bearer ${token}` };
      expect((await api(url, 'POST', '/v1/chat/completions', { body: chat, headers: auth })).status).toBe(
        200,
      );
      const moved = await api(url, 'POST', '/v1/chat/completions', {
        body: chat,
        headers: { ...auth, 'x-sluice-budget': 'other-budget' },
      });
      expect(moved.status).toBe(409);
      expect(moved.body.error.code).toBe('budget_conflict');
    } finally {
      credentials.endTurn('sess-budget', 'prompt-b1');
      credentials.revoke('sess-budget');
    }
    expect((await api(url, 'GET', '/budgets/turn-budget')).body.spent.calls).toBe(1);
    expect((await api(url, 'GET', '/budgets/other-budget')).body.spent.calls).toBe(0);
  });
});

describe('GET /session/:id/prompts/:promptId/report', () => {
  test('reports the prompt’s calls with usage and phase times, and totals, without its text', async () => {
    const sessionId = await newSession();
    const { promptId } = await runPrompt(sessionId, 'secret words here');
    const report = await api(url, 'GET', `/session/${sessionId}/prompts/${promptId}/report`);
    expect(report.status).toBe(200);
    expect(report.body).toMatchObject({
      promptId,
      sessionId,
      calls: [
        {
          outcome: 'success',
          usage: { inputTokens: 3, outputTokens: 4 },
          phases: {
            queuedMs: expect.any(Number),
            preparingMs: expect.any(Number),
            executingMs: expect.any(Number),
          },
        },
      ],
      totals: { calls: 1, inputTokens: 3, outputTokens: 4, costMinor: 0 },
    });
    expect(report.text).not.toContain('secret');
  });

  test('an unknown prompt is a 404 prompt_not_found', async () => {
    const sessionId = await newSession();
    const missing = await api(url, 'GET', `/session/${sessionId}/prompts/nope/report`);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('prompt_not_found');
  });
});
