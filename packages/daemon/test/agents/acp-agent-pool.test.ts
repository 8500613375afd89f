import { afterEach, describe, expect, test } from 'vitest';
import { AcpAgentPool } from '../../src/agents/index.js';
import { api } from '../helpers/http-client.js';
import {
  openSession,
  promptAndWait,
  sendPrompt,
  startAgentDaemon,
  terminalOf,
  testAgent,
  until,
  type AgentDaemon,
} from './acp-helpers.js';

// The process model (issue 18 §1, docs/decisions/015): processes are bounded, idle ones are
// retired and their sessions re-open lazily, and a full pool refuses with a typed 503.

let d: AgentDaemon | undefined;
afterEach(async () => {
  await d?.stop();
  d = undefined;
});

describe('the agent process pool', () => {
  test('an idle process is retired after --agent-idle-timeout-ms; the next prompt re-opens its session without session_died', async () => {
    d = await startAgentDaemon((log) => [testAgent('test', log)], { agentIdleTimeoutMs: 200 });
    const a = await openSession(d.url);
    expect((await promptAndWait(d.url, a, 'say one')).text).toBe('one ');
    await until(() => d!.daemon.agentPool!.processCount === 0, 'the idle process was retired');
    expect((await promptAndWait(d.url, a, 'say two')).text).toBe('[context] two ');
    expect(a.stream.frames.some((f) => f.event === 'session_died')).toBe(false);
    a.stream.close();
  });

  test('at --agent-max-processes a new session takes the place of an idle process', async () => {
    d = await startAgentDaemon((log) => [testAgent('test', log)], { agentMaxProcesses: 1 });
    const a = await openSession(d.url);
    const b = await openSession(d.url);
    expect(d.daemon.agentPool!.processCount).toBe(1);
    expect((await promptAndWait(d.url, b, 'say b')).text).toBe('b ');
    // a's process was retired for b; a re-opens in a fresh one, retiring b's idle process
    expect((await promptAndWait(d.url, a, 'say a')).text).toBe('a ');
    expect(d.daemon.agentPool!.processCount).toBe(1);
    expect(a.stream.frames.some((f) => f.event === 'session_died')).toBe(false);
    a.stream.close();
    b.stream.close();
  });

  test('when every process runs a turn, a create is refused: 503 agent_pool_exhausted with Retry-After', async () => {
    d = await startAgentDaemon((log) => [testAgent('test', log)], { agentMaxProcesses: 1 });
    const a = await openSession(d.url);
    const running = await sendPrompt(d.url, a.sessionId, 'wait');
    await until(() => d!.log().some((e) => e.method === 'session/prompt'), 'the turn runs');
    const refused = await api(d.url, 'POST', '/session', { body: { sessionScope: 'thread' } });
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(refused.body).toMatchObject({ code: 'agent_pool_exhausted', maxProcesses: 1 });
    await api(d.url, 'POST', `/session/${a.sessionId}/cancel`);
    await terminalOf(a.stream, running);
    expect((await api(d.url, 'POST', '/session', { body: { sessionScope: 'thread' } })).status).toBe(200);
    a.stream.close();
  });

  test('with --agent-sessions-per-process 2 two sessions share a process, and its crash ends both', async () => {
    d = await startAgentDaemon((log) => [testAgent('test', log)], { agentSessionsPerProcess: 2 });
    const a = await openSession(d.url);
    const b = await openSession(d.url);
    expect(d.daemon.agentPool!.processCount).toBe(1);
    const waiting = await sendPrompt(d.url, b.sessionId, 'wait');
    await until(() => d!.log().some((e) => e.method === 'session/prompt'), 'b runs');
    const crashing = await sendPrompt(d.url, a.sessionId, 'crash');
    expect((await terminalOf(a.stream, crashing)).data.data.code).toBe('agent_crashed');
    expect((await terminalOf(b.stream, waiting)).data.data.code).toBe('agent_crashed');
    await b.stream.waitFor((f) => f.event === 'session_died');
    // the process's gateway credential names the process, not one of its sessions
    const { text } = await promptAndWait(d.url, a, 'env');
    expect(d.daemon.credentials.resolve(text.split(' ')[1]!)?.sessionId).toMatch(/^agent-process-/);
    a.stream.close();
    b.stream.close();
  });

  test('an agent that ignores session/cancel past its grace is killed as unresponsive', async () => {
    // One session per process, the default before issue 27, which this test pins.
    const pool = new AcpAgentPool({ agents: [testAgent('test')], cancelGraceMs: 200, sessionsPerProcess: 1 });
    d = await startAgentDaemon(() => undefined, {}, { agent: pool });
    const a = await openSession(d.url);
    const b = await openSession(d.url);
    const stuck = await sendPrompt(d.url, a.sessionId, 'ignore-cancel');
    await until(() => pool.processCount === 2, 'both processes run');
    await api(d.url, 'POST', `/session/${a.sessionId}/cancel`);
    expect((await terminalOf(a.stream, stuck)).data.data.stopReason).toBe('cancelled');
    const died = await a.stream.waitFor((f) => f.event === 'session_died');
    expect(died.data.data.code).toBe('agent_unresponsive');
    expect((await promptAndWait(d.url, b, 'say unaffected')).text).toBe('unaffected ');
    await pool.close();
    a.stream.close();
    b.stream.close();
  });
});

// Issue 27 item 1: processes are bounded by memory, and a create that fits nowhere creates nothing.
describe('the agent processes’ memory budget', () => {
  test('a create no process can take within the budget is refused: 503 agent_capacity with Retry-After, nothing created', async () => {
    // 1 MiB: not even one process fits (a starting one counts at 256 MiB)
    d = await startAgentDaemon((log) => [testAgent('test', log)], {
      agentSessionsPerProcess: 4,
      agentMemoryBudgetMb: 1,
    });
    const refused = await api(d.url, 'POST', '/session', { body: { sessionScope: 'thread' } });
    expect(refused.status, refused.text).toBe(503);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(refused.body).toMatchObject({ code: 'agent_capacity' });
    expect(d.daemon.bridge.listSessions()).toEqual([]);
    expect(d.daemon.agentPool!.processCount).toBe(0);
  });

  test('sessions of one agent and workspace share a process up to --agent-sessions-per-process', async () => {
    d = await startAgentDaemon((log) => [testAgent('test', log)], { agentSessionsPerProcess: 3 });
    const sessions = [];
    for (let i = 0; i < 4; i++) sessions.push(await openSession(d.url));
    const report = d.daemon.agentPool!.describe();
    expect(report.processes.map((p) => p.sessions).sort()).toEqual([1, 3]);
    // The trees are measured at most once a second: the first reading may predate the processes.
    await until(() => d!.daemon.agentPool!.describe().rssBytes > 0, 'the trees are measured', 5_000);
    for (const s of sessions) s.stream.close();
  });
});

// Issue 27 item 3: in a shared process one session's cancel never disturbs another's turn.
test('in a shared process, a prompt that ignores cancel past its grace ends cancelled and the process lives on', async () => {
  const pool = new AcpAgentPool({ agents: [testAgent('test')], cancelGraceMs: 200, sessionsPerProcess: 2 });
  d = await startAgentDaemon(() => undefined, {}, { agent: pool });
  const a = await openSession(d.url);
  const b = await openSession(d.url);
  expect(pool.processCount).toBe(1);
  const [pid] = pool.pids();
  const waiting = await sendPrompt(d.url, b.sessionId, 'wait');
  const stuck = await sendPrompt(d.url, a.sessionId, 'ignore-cancel');
  await until(() => pool.describe().processes[0]?.runningTurns === 2, 'both turns run');
  await api(d.url, 'POST', `/session/${a.sessionId}/cancel`);
  expect((await terminalOf(a.stream, stuck)).data.data.stopReason).toBe('cancelled');
  expect(pool.pids()).toEqual([pid]);
  expect(a.stream.frames.some((f) => f.event === 'session_died')).toBe(false);
  expect(b.stream.frames.some((f) => f.event === 'session_died' || f.event === 'turn_error')).toBe(false);
  // b's turn still runs in the same process; it ends when cancelled in turn, and then b answers
  await api(d.url, 'POST', `/session/${b.sessionId}/cancel`);
  expect((await terminalOf(b.stream, waiting)).event).toBe('turn_complete');
  expect((await promptAndWait(d.url, b, 'say unaffected')).text).toBe('unaffected ');
  expect(pool.pids()).toEqual([pid]);
  await pool.close();
  a.stream.close();
  b.stream.close();
});
