import OpenAI from 'openai';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
} from '../../../runtime/test/helpers/fake-openai-server.js';
import { DaemonConfigError, resolveDaemonConfig, type DaemonConfig } from '../../src/config.js';
import { DaemonReader } from '../../src/cli/status/daemon-reader.js';
import { readStatus } from '../../src/cli/status/status-report.js';
import { statusText } from '../../src/cli/status/status-table.js';
import { loadProviders, modelSpecs } from '../../src/models/index.js';
import { DaemonTap } from '../../src/observe/index.js';
import { Scrape } from '../helpers/prometheus-text.js';
import { UPSTREAM_KEY_ENV, upstreamModel } from '../helpers/upstream-model.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// Issue 29 item 1 (docs/decisions/037): `--model-max-concurrency-total` caps all the catalogue's
// models' executing calls together. Two models of 2 slots each on hanging fake upstreams over
// loopback, a total cap of 3: the fourth call waits in its model's queue, and the operator sees
// the cap's use in the snapshot, `sluice status` and `/metrics`.

process.env[UPSTREAM_KEY_ENV] = 'sk-from-env';

let upstreamA: FakeOpenAIServer;
let upstreamB: FakeOpenAIServer;
let sluice: InProcessDaemon;
let client: OpenAI;

beforeAll(async () => {
  upstreamA = await startFakeOpenAIServer({ reply: { hang: true } });
  upstreamB = await startFakeOpenAIServer({ reply: { hang: true } });
  const model = (name: string, upstream: FakeOpenAIServer) =>
    upstreamModel(name, upstream, { maxConcurrency: 2, maxQueued: 2 });
  const config: DaemonConfig = {
    models: [model('a', upstreamA), model('b', upstreamB)],
    modelMaxConcurrencyTotal: 3,
  };
  const providers = await loadProviders(modelSpecs(resolveDaemonConfig(config)), () => {});
  sluice = await startInProcess(config, { providers, tap: new DaemonTap() });
  client = new OpenAI({ baseURL: `${sluice.url}/v1`, apiKey: 'anything', maxRetries: 0 });
});

afterAll(async () => {
  await sluice?.stop();
  await upstreamA?.close();
  await upstreamB?.close();
});

test('a total cap that is not a positive integer fails at start, naming the value', () => {
  for (const bad of [0, -2, 1.5])
    expect(() => resolveDaemonConfig({ modelMaxConcurrencyTotal: bad })).toThrow(
      expect.objectContaining({
        constructor: DaemonConfigError,
        message: expect.stringMatching(
          new RegExp(`modelMaxConcurrencyTotal.*${bad}|${bad}.*modelMaxConcurrencyTotal`),
        ),
      }),
    );
});

test('with a total cap of 3 over two models of 2 slots, the fourth call queues; the operator sees 3/3', async () => {
  const held: AbortController[] = [];
  const ask = (model: string) => {
    const signal = new AbortController();
    held.push(signal);
    return client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hold' }] }, { signal: signal.signal })
      .catch(() => undefined);
  };
  const calls = [ask('a'), ask('a'), ask('b')];
  await expect.poll(() => upstreamA.requestCount + upstreamB.requestCount).toBe(3);
  calls.push(ask('b'));
  const b = sluice.daemon.models.get('b').runtime;
  await expect.poll(() => b.schedulerSnapshot().queued).toBe(1);
  // Model b has a slot of its own free, but the daemon-wide cap is full.
  expect(upstreamB.requestCount).toBe(1);
  const snapshot = (await (await fetch(`${sluice.url}/runtime/snapshot`)).json()) as Record<string, unknown>;
  expect(snapshot['totalSlots']).toEqual({ used: 3, limit: 3 });
  const models = snapshot['models'] as Array<Record<string, unknown>>;
  expect(models.map((m) => [m['model'], m['executing'], m['queued'], m['totalSlots']])).toEqual([
    ['a', 2, 0, { used: 3, limit: 3 }],
    ['b', 1, 1, { used: 3, limit: 3 }],
  ]);
  const text = statusText(
    await readStatus(new DaemonReader(sluice.url, undefined), 10, Date.now()),
    Date.now(),
  );
  expect(text).toContain('  all models  slots 3/3 (--model-max-concurrency-total)');
  const metrics = new Scrape(await (await fetch(`${sluice.url}/metrics`)).text());
  expect(metrics.value('sluice_catalogue_slots_used', {})).toBe(3);
  expect(metrics.value('sluice_catalogue_max_concurrency_total', {})).toBe(3);
  // One of model a's calls ends (its client goes away): the waiting call of b gets the slot.
  held[0]!.abort();
  await expect.poll(() => upstreamB.requestCount).toBe(2);
  expect(b.schedulerSnapshot()).toMatchObject({ executing: 2, queued: 0, totalSlots: { used: 3, limit: 3 } });
  for (const signal of held) signal.abort();
  await Promise.all(calls);
  await expect.poll(() => b.schedulerSnapshot().inflight).toBe(0);
  expect(sluice.daemon.runtime.schedulerSnapshot().totalSlots).toEqual({ used: 0, limit: 3 });
});
