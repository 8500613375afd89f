import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createQwenHome, installQwenAgent } from '../../../../scripts/qwen-agent.js';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
} from '../../../runtime/test/helpers/fake-openai-server.js';
import { api, openEvents, type EventStream } from '../helpers/http-client.js';
import { qwenScript } from '../helpers/qwen-upstream.js';
import { startQwenSluice } from '../helpers/qwen-sluice.js';
import type { SluiceProcess } from '../helpers/sluice-process.js';
import { isTerminal, sendPrompt, terminalOf } from './acp-helpers.js';

// Issue 27 items 1–4, Acceptance, with the real `qwen --acp` 0.24.4 behind the built daemon:
// sessions share preheated agent processes by default, a killed process ends only its own
// sessions' prompts, and every model call of a shared process is attributed to its session and
// prompt (report, budget). docs/decisions/030-shared-preheated-agents.md.

const MODEL = 'fake-qwen-model';
const SESSIONS = 16;
let upstream: FakeOpenAIServer;
let home: string;
let workspace: string;
let agent: readonly string[];

beforeAll(async () => {
  agent = (await installQwenAgent()).command;
  upstream = await startFakeOpenAIServer({ reply: qwenScript });
  home = createQwenHome({ model: MODEL });
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-qwen-shared-')));
}, 300_000);

afterAll(async () => {
  await upstream?.close();
  for (const dir of [home, workspace]) if (dir) rmSync(dir, { recursive: true, force: true });
});

function serve(flags: string[]): Promise<SluiceProcess> {
  return startQwenSluice({ workspace, agent, home, model: MODEL, upstream }, flags);
}

/** The daemon's `qwen --acp` children, oldest first (by their start time in /proc). */
/** The command line of a process ('' once it is gone). */
function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/** The pids whose parent is `parent`. */
function childrenOf(parent: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent;
      } catch {
        return false;
      }
    });
}

function agentPids(sluice: SluiceProcess): number[] {
  const started = new Map<number, number>();
  for (const name of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) !== sluice.child.pid) continue;
      if (!readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('--acp')) continue;
      started.set(Number(name), Number(fields[19]));
    } catch {
      // gone meanwhile
    }
  }
  return [...started.keys()].sort((a, b) => started.get(a)! - started.get(b)! || a - b);
}

async function until(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function createSessions(
  url: string,
  count: number,
): Promise<Array<{ id: string; stream: EventStream }>> {
  const sessions: Array<{ id: string; stream: EventStream }> = [];
  // One after another: the order decides which process each joins (the fullest with room).
  for (let i = 0; i < count; i++) {
    const res = await api(url, 'POST', '/session', { body: { sessionScope: 'thread' } });
    expect(res.status, res.text).toBe(200);
    sessions.push({ id: res.body.sessionId, stream: await openEvents(url, res.body.sessionId) });
  }
  return sessions;
}

/**
 * Runs one prompt in each session, `wave` sessions at a time, and expects each to complete. A
 * session's first prompt is CPU-heavy in qwen (16 at once in one process took 46 s on this
 * loaded 2-core machine, qwen alone; docs/decisions/030), so first prompts go in waves.
 */
async function promptEach(
  url: string,
  sessions: Array<{ id: string; stream: EventStream }>,
  text: (i: number) => string,
  wave = sessions.length,
): Promise<string[]> {
  const prompts: string[] = [];
  for (let start = 0; start < sessions.length; start += wave) {
    const batch = sessions.slice(start, start + wave);
    const ids = await Promise.all(batch.map((s, j) => sendPrompt(url, s.id, text(start + j))));
    const ends = await Promise.all(batch.map((s, j) => terminalOf(s.stream, ids[j]!, 180_000)));
    for (const end of ends) expect(end.event, JSON.stringify(end.data)).toBe('turn_complete');
    prompts.push(...ids);
  }
  return prompts;
}

describe('with default flags sessions share one preheated qwen process', () => {
  let sluice: SluiceProcess;
  let sessions: Array<{ id: string; stream: EventStream }>;

  beforeAll(async () => {
    sluice = await serve([]);
    // Preheated at start: the process is there before any session asks for it.
    await until(() => agentPids(sluice).length === 1, 'the preheated agent process started');
    sessions = await createSessions(sluice.url, SESSIONS);
  }, 300_000);

  afterAll(async () => {
    for (const session of sessions ?? []) session.stream.close();
    await sluice?.stop();
  });

  test('16 sessions each complete a prompt with the real qwen, all in one agent process', async () => {
    await promptEach(sluice.url, sessions, (i) => `first ${i}`, 4);
    // then all 16 at once
    const prompts = await promptEach(sluice.url, sessions, (i) => `hello ${i}`);
    for (const i of sessions.keys()) {
      const text = sessions[i]!.stream.frames.filter(
        (f) => f.data.promptId === prompts[i] && f.data.data?.update?.sessionUpdate === 'agent_message_chunk',
      )
        .map((f) => f.data.data.update.content.text)
        .join('');
      expect(text).toContain(`hello ${i}`);
    }
    expect(agentPids(sluice)).toHaveLength(1);
    // qwen runs as one process (QWEN_CODE_NO_RELAUNCH), not relaunched in a child of its own.
    expect(childrenOf(agentPids(sluice)[0]!).filter((pid) => cmdline(pid).includes('cli.js'))).toEqual([]);
    const metrics = (await api(sluice.url, 'GET', '/metrics')).text;
    expect(metrics).toMatch(/^sluice_agent_processes 1$/m);
    expect(metrics).toMatch(new RegExp(`^sluice_agent_sessions ${SESSIONS}$`, 'm'));
  }, 600_000);

  test('the report of a prompt run in the shared process lists its model calls, and only its own', async () => {
    const [a, b] = [sessions[0]!, sessions[1]!];
    const before = upstream.requestCount;
    const [pa, pb] = await Promise.all([
      sendPrompt(sluice.url, a.id, 'report A [slow 300]'),
      sendPrompt(sluice.url, b.id, 'report B [slow 300]'),
    ]);
    await Promise.all([terminalOf(a.stream, pa, 60_000), terminalOf(b.stream, pb, 60_000)]);
    const [ra, rb] = await Promise.all([
      api(sluice.url, 'GET', `/session/${a.id}/prompts/${pa}/report`),
      api(sluice.url, 'GET', `/session/${b.id}/prompts/${pb}/report`),
    ]);
    expect(ra.status, ra.text).toBe(200);
    expect(rb.status, rb.text).toBe(200);
    // Both prompts ran at once in the one process; each report holds exactly its own calls.
    expect(ra.body.calls.length + rb.body.calls.length).toBe(upstream.requestCount - before);
    expect(ra.body.calls.length).toBeGreaterThanOrEqual(1);
    expect(rb.body.calls.length).toBeGreaterThanOrEqual(1);
  }, 90_000);

  test('a budgeted prompt in the shared process is charged exactly its calls', async () => {
    const created = await api(sluice.url, 'POST', '/budgets', {
      body: { budgetId: 'shared-process', limits: { maxCalls: 100 } },
    });
    expect(created.status, created.text).toBe(201);
    const [a, b] = [sessions[2]!, sessions[3]!];
    const budgeted = await api(sluice.url, 'POST', `/session/${a.id}/prompt`, {
      body: { prompt: [{ type: 'text', text: 'charged [slow 300]' }], budgetId: 'shared-process' },
    });
    expect(budgeted.status, budgeted.text).toBe(202);
    // Another session of the same process runs at the same time, unbudgeted.
    const other = await sendPrompt(sluice.url, b.id, 'not charged [slow 300]');
    await Promise.all([
      terminalOf(a.stream, budgeted.body.promptId, 60_000),
      terminalOf(b.stream, other, 60_000),
    ]);
    const report = await api(sluice.url, 'GET', `/session/${a.id}/prompts/${budgeted.body.promptId}/report`);
    const spent = (await api(sluice.url, 'GET', '/budgets/shared-process')).body.spent;
    expect(report.body.calls.length).toBeGreaterThanOrEqual(1);
    expect(spent.calls).toBe(report.body.calls.length);
  }, 90_000);
});

describe('a killed agent process ends only the prompts of the sessions it hosted', () => {
  let sluice: SluiceProcess;
  let sessions: Array<{ id: string; stream: EventStream }>;

  beforeAll(async () => {
    // Eight sessions per process and room for two processes: 16 sessions make two processes of 8.
    // (A count, not a memory budget: one qwen process is ~230 MB or ~410 MB as it relaunches or not.)
    sluice = await serve(['--agent-sessions-per-process', '8', '--agent-max-processes', '2']);
    await until(() => agentPids(sluice).length === 1, 'the preheated agent process started');
    sessions = await createSessions(sluice.url, SESSIONS);
    await promptEach(sluice.url, sessions, (i) => `first ${i}`, 4);
  }, 600_000);

  afterAll(async () => {
    for (const session of sessions ?? []) session.stream.close();
    await sluice?.stop();
  });

  test('kill -9 of one process: only its 8 sessions see turn_error and session_died, and all answer next', async () => {
    const pids = agentPids(sluice);
    expect(pids).toHaveLength(2);
    // The first process (the preheated one) took the first 8 sessions: fill the fullest first.
    const [victim] = pids;
    const hosted = sessions.slice(0, 8);
    const spared = sessions.slice(8);
    const running = await Promise.all(sessions.map((s) => sendPrompt(sluice.url, s.id, 'long [slow 4000]')));
    await until(
      () => upstream.requestCount > 0 && sessions.every((s) => s.stream.frames.length > 0),
      'prompts run',
    );
    process.kill(victim!, 'SIGKILL');
    const ends = await Promise.all(sessions.map((s, i) => terminalOf(s.stream, running[i]!, 120_000)));
    for (const [i, end] of ends.entries()) {
      if (i < 8)
        expect(end).toMatchObject({
          event: 'turn_error',
          data: { data: { code: 'agent_crashed', retryable: true } },
        });
      else expect(end.event, JSON.stringify(end.data)).toBe('turn_complete');
    }
    for (const s of hosted)
      await s.stream.waitFor((f) => f.event === 'session_died' && f.data.data.sessionId === s.id, 10_000);
    for (const s of spared) {
      expect(s.stream.frames.filter((f) => f.event === 'session_died' || f.event === 'turn_error')).toEqual(
        [],
      );
    }
    // Every session answers its next prompt (the hosted ones re-opened on a fresh process).
    await promptEach(sluice.url, sessions, (i) => `again ${i}`);
    expect(agentPids(sluice)).not.toContain(victim);
    expect(sessions.every((s) => s.stream.frames.filter(isTerminal).length === 3)).toBe(true);
  }, 400_000);
});
