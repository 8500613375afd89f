import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createQwenHome, installQwenAgent } from '../../../../scripts/qwen-agent.js';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
} from '../../../runtime/test/helpers/fake-openai-server.js';
import { api, openEvents, type EventStream } from '../helpers/http-client.js';
import { UPSTREAM_KEY_ENV, upstreamModel } from '../helpers/upstream-model.js';
import { qwenScript } from '../helpers/qwen-upstream.js';
import { qwenAgentFlags, qwenDaemonEnv } from '../helpers/qwen-sluice.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';
import { sendPrompt, terminalOf } from './acp-helpers.js';

// Issue 29 item 4 with the real `qwen --acp` 0.24.4: a catalogue of two models, each on its own
// fake upstream, and two sessions in the one shared qwen process, each created with its own
// model (`session/set_model`, docs/decisions/037). Each session's prompt reaches the gateway —
// the journal — as its own model, and its own upstream answers it.

let first: FakeOpenAIServer;
let second: FakeOpenAIServer;
let home: string;
let workspace: string;
let sluice: SluiceProcess;

beforeAll(async () => {
  const agent = (await installQwenAgent()).command;
  first = await startFakeOpenAIServer({ reply: qwenScript });
  second = await startFakeOpenAIServer({ reply: qwenScript });
  // qwen's own configured model is the catalogue's default, as OPENAI_MODEL tells it.
  home = createQwenHome({ model: 'model-a' });
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-qwen-models-')));
  sluice = await startSluice(
    [
      ...qwenAgentFlags(workspace, agent),
      ...['--models', JSON.stringify([upstreamModel('model-a', first), upstreamModel('model-b', second)])],
    ],
    { ...qwenDaemonEnv(home), [UPSTREAM_KEY_ENV]: 'sk-upstream' },
  );
}, 300_000);

afterAll(async () => {
  await sluice?.stop();
  await first?.close();
  await second?.close();
  for (const dir of [home, workspace]) if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A thread session on `model`, with its event stream. */
async function session(model: string): Promise<{ id: string; stream: EventStream }> {
  const res = await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread', model } });
  expect(res.status, res.text).toBe(200);
  return { id: res.body.sessionId, stream: await openEvents(sluice.url, res.body.sessionId) };
}

test('two sessions of one qwen process on different models each reach the gateway as their own model', async () => {
  const a = await session('model-a');
  const b = await session('model-b');
  try {
    const [pa, pb] = await Promise.all([
      sendPrompt(sluice.url, a.id, 'on model a'),
      sendPrompt(sluice.url, b.id, 'on model b'),
    ]);
    const ends = await Promise.all([terminalOf(a.stream, pa, 50_000), terminalOf(b.stream, pb, 50_000)]);
    for (const end of ends) expect(end.event, JSON.stringify(end.data)).toBe('turn_complete');
    const calls = async (id: string, promptId: string): Promise<string[]> => {
      const res = await api(sluice.url, 'GET', `/session/${id}/prompts/${promptId}/calls`);
      expect(res.status, res.text).toBe(200);
      return (res.body.calls as Array<{ model: string }>).map((call) => call.model);
    };
    const [modelsA, modelsB] = await Promise.all([calls(a.id, pa), calls(b.id, pb)]);
    expect(modelsA.length).toBeGreaterThanOrEqual(1);
    expect(new Set(modelsA)).toEqual(new Set(['up-model-a']));
    expect(modelsB.length).toBeGreaterThanOrEqual(1);
    expect(new Set(modelsB)).toEqual(new Set(['up-model-b']));
    // Each model's own upstream answered its session's calls.
    expect(second.requests.map((r) => r.body['model'])).toContain('up-model-b');
    expect(first.requests.map((r) => r.body['model'])).not.toContain('up-model-b');
    const agents = (await api(sluice.url, 'GET', '/runtime/snapshot')).body.agents;
    expect(agents.processes).toHaveLength(1);
  } finally {
    a.stream.close();
    b.stream.close();
  }
}, 60_000);
