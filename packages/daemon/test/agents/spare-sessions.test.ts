import { FakeClock } from '@sluice/runtime/testing';
import { afterEach, describe, expect, test } from 'vitest';
import { SPARE_QUIET_MS } from '../../src/agents/acp/spare-sessions.js';
import { api, openEvents } from '../helpers/http-client.js';
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

// Issue 27: a shared agent process opens agent sessions ahead while idle, so that creating a
// session adopts one instead of waiting for the agent's `session/new` (docs/decisions/030).

let d: AgentDaemon | undefined;
let clock: FakeClock;
afterEach(async () => {
  await d?.stop();
  d = undefined;
});

async function start(spares: number, flags: string[] = [], config: Record<string, unknown> = {}) {
  clock = new FakeClock();
  d = await startAgentDaemon(
    (log) => [testAgent('test', ...flags, log)],
    { agentSessionsPerProcess: 8, agentSpareSessions: spares, ...config },
    { agentClock: clock },
  );
  d.daemon.agentPool!.preheat(); // as `sluice serve` does once it listens
  await until(() => processes()[0]?.ready === true, 'the preheated process answered initialize');
}

/** The test agent's `_meta` of its commands update, less the skills' text. */
const KEPT_META = { availableSkills: ['review'], other: 'kept' };

const processes = () => d!.daemon.agentPool!.describe().processes;
const calls = (method: string) => d!.log().filter((entry) => entry.method === method);

/** Lets the process stay idle one quiet period; its spares are then made back to back up to `count`. */
async function replenish(count: number): Promise<void> {
  clock.advance(SPARE_QUIET_MS);
  for (let ready = processes()[0]!.spares; ready < count; ready++) {
    await until(() => processes()[0]!.spares > ready, `spare ${ready + 1} is ready`);
    clock.advance(0);
  }
}

/** Quiet periods pass on the clock while the process is busy; what reached the agent meanwhile. */
async function quietPeriodsPass(): Promise<void> {
  clock.advance(SPARE_QUIET_MS * 10);
  await new Promise((resolve) => setTimeout(resolve, 200));
}

describe('spare agent sessions', () => {
  test('a preheated process opens 2 while idle; creates adopt them without session/new; they are replenished only once idle', async () => {
    await start(2, ['--slow-new-from=3', '--slow-new-ms=400']);
    expect(calls('session/new')).toHaveLength(0);
    await replenish(2);
    expect(calls('session/new')).toHaveLength(2);

    const a = await openSession(d!.url);
    const b = await openSession(d!.url);
    expect(calls('session/new')).toHaveLength(2);
    expect(processes()[0]).toMatchObject({ sessions: 2, spares: 0 });

    // a create waiting for its (slow) session/new keeps the process busy: no spare meanwhile
    const c = api(d!.url, 'POST', '/session', { body: { sessionScope: 'thread' } });
    await until(() => calls('session/new').length === 3, "c's session/new reached the agent");
    await quietPeriodsPass();
    expect(calls('session/new')).toHaveLength(3);
    expect((await c).status).toBe(200);

    // so does a running turn
    const running = await sendPrompt(d!.url, a.sessionId, 'wait');
    await until(() => calls('session/prompt').length === 1, 'the turn runs');
    await quietPeriodsPass();
    expect(calls('session/new')).toHaveLength(3);
    await api(d!.url, 'POST', `/session/${a.sessionId}/cancel`);
    await terminalOf(a.stream, running);

    await replenish(2);
    expect(calls('session/new')).toHaveLength(5);
    expect((await promptAndWait(d!.url, b, 'say adopted')).text).toBe('adopted ');
    expect(processes()).toHaveLength(1);
    a.stream.close();
    b.stream.close();
  });

  test('what the agent sent for a spare before adoption comes first in the adopting session’s stream, and only there', async () => {
    await start(2, ['--commands']);
    await replenish(2);
    const [first, second] = calls('session/new').map(
      (_, i) => `cmd-sess-${calls('initialize')[0]!.pid}-${i + 1}`,
    );
    const a = await openSession(d!.url);
    const b = await openSession(d!.url);
    const { promptId } = await promptAndWait(d!.url, a, 'say hello');
    await promptAndWait(d!.url, b, 'say hello');

    const commandsOf = async (sessionId: string) => {
      const replay = await openEvents(d!.url, sessionId, { headers: { 'Last-Event-ID': '0' } });
      await replay.waitFor((f) => f.event === 'turn_complete', 5_000);
      replay.close();
      const updates = replay.frames.filter((f) => f.event === 'session_update');
      return { updates, names: updates.map((f) => f.data.data.update.availableCommands?.[0]?.name) };
    };
    const seenByA = await commandsOf(a.sessionId);
    expect(seenByA.updates[0]!.data.data.update.sessionUpdate).toBe('available_commands_update');
    expect(seenByA.updates[0]!.data.data.update._meta).toEqual(KEPT_META);
    expect(seenByA.updates[0]!.data.promptId).toBeUndefined();
    expect(seenByA.updates[1]!.data.promptId).toBe(promptId);
    const seenByB = await commandsOf(b.sessionId);
    expect(seenByA.names.filter(Boolean)).toEqual([first]);
    expect(seenByB.names.filter(Boolean)).toEqual([second]);
    a.stream.close();
    b.stream.close();
  });

  test('a session that picked a model still gets session/set_model when it adopts a spare', async () => {
    await start(1, ['--models'], {
      models: [
        { name: 'house-model', provider: 'echo' },
        { name: 'other', aliases: ['second'] },
      ],
    });
    await replenish(1);
    const session = await openSession(d!.url, { model: 'second' });
    expect(calls('session/new')).toHaveLength(1);
    const [spareId] = calls('session/new').map((_, i) => `sess-${calls('initialize')[0]!.pid}-${i + 1}`);
    expect(calls('session/set_model').map((entry) => entry.params)).toEqual([
      expect.objectContaining({ sessionId: spareId, modelId: 'other' }),
    ]);
    expect((await promptAndWait(d!.url, session, 'model')).text).toBe('other');
    session.stream.close();
  });

  test('with --agent-spare-sessions 0 nothing is opened ahead: each create sends its session/new', async () => {
    await start(0);
    await quietPeriodsPass();
    expect(calls('session/new')).toHaveLength(0);
    const a = await openSession(d!.url);
    expect(calls('session/new')).toHaveLength(1);
    await quietPeriodsPass();
    expect(calls('session/new')).toHaveLength(1);
    expect(processes()[0]!.spares).toBe(0);
    expect((await promptAndWait(d!.url, a, 'say plain')).text).toBe('plain ');
    a.stream.close();
  });

  test('without a spare, what the agent sends for a new session before its answer still reaches it', async () => {
    await start(0, ['--commands-before-answer']);
    const a = await openSession(d!.url);
    const name = `cmd-sess-${calls('initialize')[0]!.pid}-1`;
    const replay = await openEvents(d!.url, a.sessionId, { headers: { 'Last-Event-ID': '0' } });
    const update = await replay.waitFor((f) => f.event === 'session_update', 5_000);
    replay.close();
    expect(update.data.data.update.availableCommands?.[0]?.name).toBe(name);
    expect(update.data.data.update._meta).toEqual(KEPT_META);
    a.stream.close();
  });

  test('a fresh session’s stream gets the commands and skill names, never the skills’ text (as from qwen serve)', async () => {
    await start(0, ['--commands']);
    const a = await openSession(d!.url);
    const replay = await openEvents(d!.url, a.sessionId, { headers: { 'Last-Event-ID': '0' } });
    const update = await replay.waitFor((f) => f.event === 'session_update', 5_000);
    replay.close();
    expect(update.data.data.update.availableCommands).toHaveLength(1);
    expect(update.data.data.update._meta).toEqual(KEPT_META);
    expect(JSON.stringify(update.data)).not.toContain('Read the change');
    a.stream.close();
  });

  test('a crash of the process drops its spares; the next create works', async () => {
    await start(2);
    await replenish(2);
    const a = await openSession(d!.url);
    const [pid] = d!.daemon.agentPool!.pids();
    const crashing = await sendPrompt(d!.url, a.sessionId, 'crash');
    expect((await terminalOf(a.stream, crashing)).data.data.code).toBe('agent_crashed');
    await until(() => !d!.daemon.agentPool!.pids().includes(pid!), 'the crashed process is forgotten');
    expect(processes().reduce((sum, p) => sum + p.spares, 0)).toBe(0);

    const b = await openSession(d!.url);
    expect((await promptAndWait(d!.url, b, 'say fresh')).text).toBe('fresh ');
    expect((await promptAndWait(d!.url, a, 'say again')).text).toBe('again ');
    a.stream.close();
    b.stream.close();
  });
});
