import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createQwenHome, installQwenAgent } from '../../../../scripts/qwen-agent.js';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
} from '../../../runtime/test/helpers/fake-openai-server.js';
import { api, openEvents } from '../helpers/http-client.js';
import { qwenScript } from '../helpers/qwen-upstream.js';
import { startQwenSluice } from '../helpers/qwen-sluice.js';
import type { SluiceProcess } from '../helpers/sluice-process.js';
import { DEFAULT_AGENT_SPARE_SESSIONS } from '../../src/defaults.js';
import { openSession, sendPrompt, terminalOf } from './acp-helpers.js';

// Issue 27: with default flags the preheated qwen process opens spare agent sessions while idle;
// a create adopts one, gets the commands qwen sent for it once, and its first prompt completes
// (docs/decisions/030, spares).

const MODEL = 'fake-qwen-model';
/** The daemon's default number of spares per shared process. */
const SPARES = DEFAULT_AGENT_SPARE_SESSIONS;
let upstream: FakeOpenAIServer;
let home: string;
let workspace: string;
let sluice: SluiceProcess;

beforeAll(async () => {
  const agent = (await installQwenAgent()).command;
  upstream = await startFakeOpenAIServer({ reply: qwenScript });
  home = createQwenHome({ model: MODEL });
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-qwen-spares-')));
  sluice = await startQwenSluice({ workspace, agent, home, model: MODEL, upstream }, []);
}, 300_000);

afterAll(async () => {
  await sluice?.stop();
  await upstream?.close();
  for (const dir of [home, workspace]) if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Ready spares of the daemon's agent processes, from the snapshot. */
async function spares(): Promise<number> {
  const res = await api(sluice.url, 'GET', '/runtime/snapshot');
  const processes = (res.body.agents?.processes ?? []) as Array<{ spares: number }>;
  return processes.reduce((sum, p) => sum + p.spares, 0);
}

test('a create adopts a spare qwen session: it sees qwen’s commands once and its first prompt completes', async () => {
  await expect.poll(spares, { timeout: 60_000, interval: 200 }).toBe(SPARES);
  const metrics = (await api(sluice.url, 'GET', '/metrics')).text;
  expect(metrics).toMatch(new RegExp(`^sluice_agent_process_spare_sessions\\{[^}]*\\} ${SPARES}$`, 'm'));
  const session = await openSession(sluice.url);
  expect(await spares()).toBeLessThan(SPARES);

  const promptId = await sendPrompt(sluice.url, session.sessionId, 'hello');
  const end = await terminalOf(session.stream, promptId, 120_000);
  expect(end.event, JSON.stringify(end.data)).toBe('turn_complete');
  session.stream.close();

  const replay = await openEvents(sluice.url, session.sessionId, { headers: { 'Last-Event-ID': '0' } });
  await replay.waitFor((f) => f.event === 'turn_complete', 10_000);
  replay.close();
  // qwen sends it once the session's skills are listed: before adoption (held, then published
  // first) or later (relayed as for a fresh session); either way exactly once
  const commands = replay.frames.filter(
    (f) => f.event === 'session_update' && f.data.data.update.sessionUpdate === 'available_commands_update',
  );
  expect(commands).toHaveLength(1);
  // as from qwen serve: the commands and skill names, not every skill's text (~1.5 MB a session)
  const update = commands[0]!.data.data.update;
  expect(update.availableCommands.length).toBeGreaterThan(0);
  // qwen names its skills only when it sent their texts too (its bundled skills: always)
  expect(update._meta?.availableSkills?.length).toBeGreaterThan(0);
  expect(update._meta?.availableSkillDetails).toBeUndefined();
  // replenished once the process is idle again
  await expect.poll(spares, { timeout: 60_000, interval: 200 }).toBe(SPARES);
}, 300_000);
