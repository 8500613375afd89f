import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
} from '../../../runtime/test/helpers/fake-openai-server.js';
import type { DaemonConfig } from '../../src/config.js';
import { loadProviders, modelSpecs } from '../../src/models/index.js';
import { resolveDaemonConfig } from '../../src/config.js';
import { api, textPrompt } from '../helpers/http-client.js';
import { UPSTREAM_KEY_ENV, upstreamModel } from '../helpers/upstream-model.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// Sessions pick a model (issue 29 item 4): `POST /session {"model"}` names a catalogue model
// (or alias), the built-in chat agent calls it, the status shows it, and a session loaded after
// a restart keeps it — two models, each calling its own fake upstream over loopback HTTP.

process.env[UPSTREAM_KEY_ENV] = 'sk-from-env';

let home: string;
let main: FakeOpenAIServer;
let other: FakeOpenAIServer;
let sluice: InProcessDaemon | undefined;

beforeEach(async () => {
  home = mkdtempSync(join(tmpdir(), 'sluice-session-model-'));
  main = await startFakeOpenAIServer({ reply: { text: 'from main' } });
  other = await startFakeOpenAIServer({ reply: { text: 'from other' } });
});
afterEach(async () => {
  await sluice?.stop();
  sluice = undefined;
  await main.close();
  await other.close();
  rmSync(home, { recursive: true, force: true });
});

/** A daemon over `home` (its data and workspace survive a restart) with the two models. */
async function start(): Promise<InProcessDaemon> {
  const config: DaemonConfig = {
    dataDir: home,
    workspace: home,
    models: [upstreamModel('main', main), upstreamModel('other', other, { aliases: ['second'] })],
  };
  const providers = await loadProviders(modelSpecs(resolveDaemonConfig(config)), () => {});
  return startInProcess(config, { providers });
}

/** Sends one prompt and waits until the session has none pending. */
async function promptAndSettle(url: string, sessionId: string, text: string): Promise<void> {
  const sent = await api(url, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt(text) });
  expect(sent.status).toBe(202);
  await expect
    .poll(async () => (await api(url, 'GET', `/session/${sessionId}/status`)).body.pendingPromptCount, {
      timeout: 10_000,
    })
    .toBe(0);
}

const upstreamModels = (server: FakeOpenAIServer) => server.requests.map((request) => request.body['model']);

test("a session created with a model (by alias) calls that model's upstream, and so does its branch", async () => {
  sluice = await start();
  const created = await api(sluice.url, 'POST', '/session', {
    body: { sessionScope: 'thread', model: 'second' },
  });
  expect(created.status).toBe(200);
  const sessionId = created.body.sessionId as string;
  await promptAndSettle(sluice.url, sessionId, 'hello');
  expect(upstreamModels(other)).toEqual(['up-other']);
  expect(upstreamModels(main)).toEqual([]);
  const status = await api(sluice.url, 'GET', `/session/${sessionId}/status`);
  expect(status.body.model).toBe('other');
  const branch = await api(sluice.url, 'POST', `/session/${sessionId}/branch`, { body: {} });
  expect(branch.status).toBe(201);
  const branchId = branch.body.sessionId as string;
  expect((await api(sluice.url, 'GET', `/session/${branchId}/status`)).body.model).toBe('other');
  await promptAndSettle(sluice.url, branchId, 'in the branch');
  expect(upstreamModels(other)).toEqual(['up-other', 'up-other']);
  expect(upstreamModels(main)).toEqual([]);
});

test("a session naming no model runs on the catalogue's default and says so", async () => {
  sluice = await start();
  const created = await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread' } });
  const sessionId = created.body.sessionId as string;
  await promptAndSettle(sluice.url, sessionId, 'hello');
  expect(upstreamModels(main)).toEqual(['up-main']);
  expect(upstreamModels(other)).toEqual([]);
  expect((await api(sluice.url, 'GET', `/session/${sessionId}/status`)).body.model).toBe('main');
});

test('a create naming a model the catalogue lacks is 404 model_not_found and opens nothing', async () => {
  sluice = await start();
  const refused = await api(sluice.url, 'POST', '/session', {
    body: { sessionScope: 'thread', model: 'gpt-4o' },
  });
  expect(refused.status).toBe(404);
  expect(refused.body).toMatchObject({ code: 'model_not_found' });
  expect(refused.body.error).toContain('gpt-4o');
  expect(sluice.daemon.bridge.listSessions()).toEqual([]);
  const malformed = await api(sluice.url, 'POST', '/session', { body: { model: 7 } });
  expect(malformed.status).toBe(400);
  expect(malformed.body).toMatchObject({ code: 'invalid_model' });
});

test('a session loaded after a restart keeps its model (SQLite store)', async () => {
  sluice = await start();
  const created = await api(sluice.url, 'POST', '/session', {
    body: { sessionScope: 'thread', model: 'other' },
  });
  const sessionId = created.body.sessionId as string;
  await promptAndSettle(sluice.url, sessionId, 'before');
  await sluice.stop();
  sluice = await start();
  const loaded = await api(sluice.url, 'POST', `/session/${sessionId}/load`, { body: {} });
  expect(loaded.status).toBe(200);
  expect((await api(sluice.url, 'GET', `/session/${sessionId}/status`)).body.model).toBe('other');
  await promptAndSettle(sluice.url, sessionId, 'after');
  expect(upstreamModels(other)).toEqual(['up-other', 'up-other']);
  expect(upstreamModels(main)).toEqual([]);
});
