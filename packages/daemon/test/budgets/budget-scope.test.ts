import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { api } from '../helpers/http-client.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// Issue 28 item 2: a session credential could charge any task's budget by naming it in
// `X-Sluice-Budget` while no budgeted prompt of its session ran. It may charge only budgets
// attached to its own session (a turn of that session ran with it); anything else is `403
// budget_forbidden`. The daemon token still names any budget. A real daemon on loopback (SQLite
// journal, echo model); the credentials' turns begin and end as the agent's turn runner does.

let sluice: InProcessDaemon;
let url: string;
const chat = { messages: [{ role: 'user', content: 'ping pong' }] };
const OPERATOR = { authorization: 'Bearer operator-token' };

beforeAll(async () => {
  sluice = await startInProcess({}, {}, { token: 'operator-token' });
  url = sluice.url;
  for (const budgetId of ['own-task', 'other-task', 'shared-a', 'shared-b'])
    expect((await api(url, 'POST', '/budgets', { body: { budgetId }, headers: OPERATOR })).status).toBe(201);
});
afterAll(async () => {
  await sluice?.stop();
});

async function spentCalls(budgetId: string): Promise<number> {
  return (await api(url, 'GET', `/budgets/${budgetId}`, { headers: OPERATOR })).body.spent.calls as number;
}

function call(headers: Record<string, string>) {
  return api(url, 'POST', '/v1/chat/completions', { body: chat, headers });
}

/** Runs one turn of `sessionId` with `budgetId` as the agent's turn runner does (begin, end). */
function runTurn(sessionId: string, promptId: string, budgetId: string): void {
  const { credentials } = sluice.daemon;
  credentials.beginTurn(sessionId, promptId, new AbortController().signal, budgetId);
  credentials.endTurn(sessionId, promptId);
}

describe('a session credential charges only budgets attached to its session (issue 28 item 2)', () => {
  test('with no budgeted prompt in its session, naming another task’s budget is 403 budget_forbidden and charges nothing', async () => {
    const token = sluice.daemon.credentials.issue('sess-idle');
    try {
      const refused = await call({ authorization: `Bearer ${token}`, 'x-sluice-budget': 'other-task' });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({
        code: 'budget_forbidden',
        type: 'invalid_request_error',
      });
      expect(refused.body.error.message).toContain('only budgets its own session');
      expect(await spentCalls('other-task')).toBe(0);
      // Without the header the call is the session's own and is served.
      expect((await call({ authorization: `Bearer ${token}` })).status).toBe(200);
      expect(await spentCalls('other-task')).toBe(0);
    } finally {
      sluice.daemon.credentials.revoke('sess-idle');
    }
  });

  test('a budget one of its prompts ran with stays chargeable after the turn; others stay forbidden', async () => {
    const { credentials } = sluice.daemon;
    const token = credentials.issue('sess-own');
    try {
      runTurn('sess-own', 'prompt-own-1', 'own-task');
      const auth = { authorization: `Bearer ${token}` };
      expect((await call({ ...auth, 'x-sluice-budget': 'own-task' })).status).toBe(200);
      expect(await spentCalls('own-task')).toBe(1);
      expect((await call({ ...auth, 'x-sluice-budget': 'other-task' })).status).toBe(403);
      expect(await spentCalls('other-task')).toBe(0);
    } finally {
      credentials.revoke('sess-own');
    }
    // A new credential of the same session starts with nothing attached.
    const fresh = credentials.issue('sess-own');
    try {
      const refused = await call({ authorization: `Bearer ${fresh}`, 'x-sluice-budget': 'own-task' });
      expect(refused.status).toBe(403);
    } finally {
      credentials.revoke('sess-own');
    }
  });

  test('a shared agent process: X-Sluice-Agent-Session picks the session whose budgets count', async () => {
    const { credentials } = sluice.daemon;
    const token = credentials.issueShared('proc-1');
    credentials.bindAgentSession('proc-1', 'agent-a', 'sess-a');
    credentials.bindAgentSession('proc-1', 'agent-b', 'sess-b');
    try {
      runTurn('sess-a', 'prompt-a-1', 'shared-a');
      const auth = { authorization: `Bearer ${token}` };
      const asB = await call({ ...auth, 'x-sluice-agent-session': 'agent-b', 'x-sluice-budget': 'shared-a' });
      expect(asB.status).toBe(403);
      expect(asB.body.error.code).toBe('budget_forbidden');
      // Without the header the call is the process's own (two sessions): no session's budgets.
      expect((await call({ ...auth, 'x-sluice-budget': 'shared-a' })).status).toBe(403);
      expect(await spentCalls('shared-a')).toBe(0);
      const asA = await call({ ...auth, 'x-sluice-agent-session': 'agent-a', 'x-sluice-budget': 'shared-a' });
      expect(asA.status).toBe(200);
      expect(await spentCalls('shared-a')).toBe(1);
      // Session a left the process: its budgets go with it.
      credentials.unbindAgentSession('proc-1', 'agent-a');
      credentials.bindAgentSession('proc-1', 'agent-a', 'sess-a');
      const after = await call({
        ...auth,
        'x-sluice-agent-session': 'agent-a',
        'x-sluice-budget': 'shared-a',
      });
      expect(after.status).toBe(403);
    } finally {
      credentials.revoke('proc-1');
    }
  });

  test('the daemon token (the operator) may still name any budget', async () => {
    expect((await call({ ...OPERATOR, 'x-sluice-budget': 'shared-b' })).status).toBe(200);
    expect(await spentCalls('shared-b')).toBe(1);
  });
});
