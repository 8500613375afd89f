import { afterEach, describe, expect, test } from 'vitest';
import { api } from '../helpers/http-client.js';
import { openSession, promptAndWait, startAgentDaemon, testAgent, type AgentDaemon } from './acp-helpers.js';

// Issue 27: sessions share agent processes, so a `session/new` that a busy process answers late
// must fail only the session being created, not end the process its other sessions live in.

let d: AgentDaemon | undefined;
afterEach(async () => {
  await d?.stop();
  d = undefined;
});

describe('a shared agent process that answers session/new too late', () => {
  test('fails only that create (504 agent_unresponsive, retryable); its other sessions keep working in the same process', async () => {
    d = await startAgentDaemon((log) => [testAgent('test', '--slow-new-from=2', '--slow-new-ms=8000', log)], {
      agentSessionsPerProcess: 8,
      agentStartTimeoutMs: 3_000,
    });
    const first = await openSession(d.url);
    expect((await promptAndWait(d.url, first, 'say before')).text).toBe('before ');
    const [pid] = d.daemon.agentPool!.pids();

    const late = await api(d.url, 'POST', '/session', { body: { sessionScope: 'thread' } });
    expect(late.status, late.text).toBe(504);
    expect(late.body.code).toBe('agent_unresponsive');
    expect(late.body.error).toMatch(/session\/new within 3000 ms; its process keeps serving/);

    expect(d.daemon.agentPool!.pids()).toEqual([pid]);
    expect((await promptAndWait(d.url, first, 'say after')).text).toBe('after ');
    expect(first.stream.frames.some((f) => f.event === 'session_died')).toBe(false);
    first.stream.close();
  });
});
