import { afterEach, describe, expect, test } from 'vitest';
import { api } from '../helpers/http-client.js';
import {
  openSession,
  promptAndWait,
  sendPrompt,
  startAgentDaemon,
  terminalOf,
  testAgent,
  textOf,
  until,
  type AgentDaemon,
} from './acp-helpers.js';

// A crashed, exited or hung agent process ends the running prompts of only the sessions it
// hosts, with `agent_crashed` / `agent_unresponsive` and `session_died`; every other session
// keeps serving, and the next prompt re-opens the session in a fresh process (issue 18 §1).

let d: AgentDaemon | undefined;
afterEach(async () => {
  await d?.stop();
  d = undefined;
});

describe('a crashed agent process', () => {
  test('ends only its own session: turn_error agent_crashed + session_died; the other session keeps answering', async () => {
    d = await startAgentDaemon((log) => [testAgent('test', log)]);
    const a = await openSession(d.url);
    const b = await openSession(d.url);
    expect(d.daemon.agentPool!.processCount).toBe(2);
    expect((await promptAndWait(d.url, a, 'say before')).text).toBe('before ');
    const waiting = await sendPrompt(d.url, b.sessionId, 'wait');
    const crashing = await sendPrompt(d.url, a.sessionId, 'crash');
    const queued = await sendPrompt(d.url, a.sessionId, 'say after the crash');

    const failed = await terminalOf(a.stream, crashing);
    expect(failed.event).toBe('turn_error');
    expect(failed.data.data.code).toBe('agent_crashed');
    const died = await a.stream.waitFor((f) => f.event === 'session_died');
    expect(died.data.data).toMatchObject({
      sessionId: a.sessionId,
      reason: 'channel_closed',
      exitCode: 7,
      signalCode: null,
      code: 'agent_crashed',
      recoverable: true,
    });
    expect(died.data.data.message).toEqual(expect.any(String));

    // the queued prompt stayed queued and ran in a fresh process, with the history replayed
    const recovered = await terminalOf(a.stream, queued);
    expect(recovered.event).toBe('turn_complete');
    expect(textOf(a.stream, queued)).toBe('[context] after the crash ');

    // b's running prompt was not touched: it ends as cancelled only when b cancels it
    expect(b.stream.frames.some((f) => f.event === 'session_died')).toBe(false);
    expect((await api(d.url, 'POST', `/session/${b.sessionId}/cancel`)).status).toBe(204);
    expect((await terminalOf(b.stream, waiting)).data.data.stopReason).toBe('cancelled');
    expect((await promptAndWait(d.url, b, 'say still here')).text).toBe('still here ');
    a.stream.close();
    b.stream.close();
  });

  test('killed from outside (kill -9), its session re-opens with session/load when the agent offers it', async () => {
    d = await startAgentDaemon((log) => [testAgent('test', '--load', log)]);
    const a = await openSession(d.url);
    expect((await promptAndWait(d.url, a, 'say first')).text).toBe('first ');
    const [pid] = d.daemon.agentPool!.pids();
    const running = await sendPrompt(d.url, a.sessionId, 'wait');
    await until(
      () => d!.log().filter((e) => e.method === 'session/prompt').length === 2,
      'the prompt reached the agent',
    );
    process.kill(pid!, 'SIGKILL');
    const failed = await terminalOf(a.stream, running);
    expect(failed.data.data.code).toBe('agent_crashed');
    expect((await a.stream.waitFor((f) => f.event === 'session_died')).data.data.signalCode).toBe('SIGKILL');

    const next = await promptAndWait(d.url, a, 'say recovered');
    expect(next.text).toBe('recovered ');
    const load = d.log().find((e) => e.method === 'session/load');
    expect(load?.params).toMatchObject({ cwd: d.workspace });
    expect(load!.pid).not.toBe(pid);
    // the agent's id of the session is kept across processes
    const prompts = d.log().filter((e) => e.method === 'session/prompt');
    expect(prompts.at(-1)!.params['sessionId']).toBe(load!.params['sessionId']);
    expect(prompts[0]!.params['sessionId']).toBe(load!.params['sessionId']);
    // loaded, not replayed: the prompt carries no history block
    expect((prompts.at(-1)!.params['prompt'] as unknown[]).length).toBe(1);
    a.stream.close();
  });
});

describe('a hung agent process', () => {
  test('that leaves the liveness probe unanswered is killed: turn_error agent_unresponsive, and the session recovers', async () => {
    // The bound is generous enough that a healthy process on a loaded machine answers in time;
    // that other sessions are unaffected is shown with a crash above.
    d = await startAgentDaemon((log) => [testAgent('test', log)], { agentLivenessTimeoutMs: 1_500 });
    const a = await openSession(d.url);
    await promptAndWait(d.url, a, 'say before');
    const hanging = await sendPrompt(d.url, a.sessionId, 'hang');
    const failed = await terminalOf(a.stream, hanging);
    expect(failed.event).toBe('turn_error');
    expect(failed.data.data.code).toBe('agent_unresponsive');
    const died = await a.stream.waitFor((f) => f.event === 'session_died');
    expect(died.data.data).toMatchObject({
      code: 'agent_unresponsive',
      recoverable: true,
      signalCode: 'SIGKILL',
    });
    expect((await promptAndWait(d.url, a, 'say back')).text).toBe('[context] back ');
    a.stream.close();
  });
});

describe('an agent that cannot run sessions', () => {
  const create = async (agent: ReturnType<typeof testAgent>) => {
    d = await startAgentDaemon(() => [agent]);
    return api(d.url, 'POST', '/session', { body: { sessionScope: 'thread' } });
  };

  test('that is not installed refuses the create: 502 agent_unavailable naming the command', async () => {
    const res = await create({ name: 'missing', command: ['sluice-no-such-agent-binary', '--acp'] });
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ code: 'agent_unavailable', agent: 'missing' });
    expect(res.body.error).toContain('command not found: sluice-no-such-agent-binary');
    expect(d!.daemon.bridge.sessionCount).toBe(0);
  });

  test("whose initialize fails refuses the create with the agent's own message", async () => {
    const res = await create(testAgent('test', '--mode=fail-initialize'));
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('agent_unavailable');
    expect(res.body.agentMessage).toContain('initialize refused, no licence');
    expect(d!.daemon.agentPool!.processCount).toBe(0);
  });

  test('that exits at start refuses the create with what it wrote to stderr', async () => {
    const res = await create(testAgent('test', '--mode=exit-at-start'));
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('agent_unavailable');
    expect(res.body.agentMessage).toContain('missing configuration');
  });

  test('that needs authentication refuses the create saying so', async () => {
    const res = await create(testAgent('test', '--mode=needs-auth'));
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('agent_unavailable');
    expect(res.body.error).toContain('requires authentication');
    expect(res.body.agentMessage).toContain('please run `test-agent login`');
    expect(d!.daemon.bridge.sessionCount).toBe(0);
  });
});

describe('named agents', () => {
  test('POST /session {agent} picks one by name; an unknown name is 400 unknown_agent', async () => {
    d = await startAgentDaemon((log) => [testAgent('first', log), testAgent('second', '--load', log)]);
    const chosen = await openSession(d.url, { agent: 'second' });
    expect((await promptAndWait(d.url, chosen, 'say picked')).text).toBe('picked ');
    const initialized = d.log().filter((e) => e.method === 'initialize');
    expect(initialized).toHaveLength(1);
    const unknown = await api(d.url, 'POST', '/session', {
      body: { sessionScope: 'thread', agent: 'third' },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ code: 'unknown_agent', known: ['first', 'second'] });
    chosen.stream.close();
  });
});

describe("an agent's stderr", () => {
  test('goes to the daemon log line by line at debug (it may quote prompts), never to a client', async () => {
    const lines: Array<{ fields: Record<string, unknown>; message: string; level: string }> = [];
    const agentLog = {
      debug: (fields: Record<string, unknown>, message: string) =>
        lines.push({ fields, message, level: 'debug' }),
      info: (fields: Record<string, unknown>, message: string) =>
        lines.push({ fields, message, level: 'info' }),
      warn: (fields: Record<string, unknown>, message: string) =>
        lines.push({ fields, message, level: 'warn' }),
    };
    d = await startAgentDaemon((log) => [testAgent('test', log)], {}, { agentLog });
    const a = await openSession(d.url);
    const crashing = await sendPrompt(d.url, a.sessionId, 'crash');
    await terminalOf(a.stream, crashing);
    await until(
      () => lines.some((l) => l.message === 'test agent: crashing on purpose'),
      'the line was logged',
    );
    expect(lines.find((l) => l.message === 'test agent: crashing on purpose')).toMatchObject({
      fields: { agent: 'test', stream: 'stderr' },
      level: 'debug',
    });
    expect(a.stream.raw()).not.toContain('crashing on purpose');
    a.stream.close();
  });
});
