import OpenAI, { NotFoundError, type APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ModelRequestRecord, ModelResultRecord } from '@sluice/runtime';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
} from '../../../runtime/test/helpers/fake-openai-server.js';
import type { DaemonConfig } from '../../src/config.js';
import { loadProviders, modelSpecs } from '../../src/models/index.js';
import { resolveDaemonConfig } from '../../src/config.js';
import { DaemonReader } from '../../src/cli/status/daemon-reader.js';
import { readStatus } from '../../src/cli/status/status-report.js';
import { statusText } from '../../src/cli/status/status-table.js';
import { Scrape } from '../helpers/prometheus-text.js';
import { UPSTREAM_KEY_ENV, upstreamModel } from '../helpers/upstream-model.js';
import { DaemonTap } from '../../src/observe/index.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// The model catalogue on the OpenAI wire (issue 29): `[[model]]` tables, each its own scheduler,
// aliases, OpenAI's 404, and fallbacks — the official `openai` client against a daemon on
// loopback whose models call fake upstreams over HTTP.

const user = (content: string): OpenAI.Chat.ChatCompletionMessageParam => ({ role: 'user', content });

/** A daemon serving `models`, each provider loaded as the CLI loads it. */
async function startCatalogue(models: DaemonConfig['models']): Promise<InProcessDaemon> {
  const config: DaemonConfig = { models };
  const providers = await loadProviders(modelSpecs(resolveDaemonConfig(config)), () => {});
  return startInProcess(config, { providers, tap: new DaemonTap() });
}

process.env[UPSTREAM_KEY_ENV] = 'sk-from-env';

describe('a catalogue of two models on the OpenAI wire', () => {
  let slowUpstream: FakeOpenAIServer;
  let fastUpstream: FakeOpenAIServer;
  let sluice: InProcessDaemon;
  let client: OpenAI;
  beforeAll(async () => {
    slowUpstream = await startFakeOpenAIServer({ reply: { hang: true } });
    fastUpstream = await startFakeOpenAIServer({ reply: { text: 'fast answer' } });
    sluice = await startCatalogue([
      upstreamModel('slow', slowUpstream, { maxConcurrency: 1, maxQueued: 1 }),
      upstreamModel('fast', fastUpstream, { maxConcurrency: 2, aliases: ['quick'] }),
      { name: 'offline', provider: 'echo', echoDelayMs: 0 },
    ]);
    client = new OpenAI({ baseURL: `${sluice.url}/v1`, apiKey: 'anything', maxRetries: 0 });
  });
  afterAll(async () => {
    await sluice?.stop();
    await slowUpstream?.close();
    await fastUpstream?.close();
  });

  test('GET /v1/models lists every model and alias of the catalogue', async () => {
    const models = await client.models.list();
    expect(models.data.map((model) => [model.id, model.owned_by])).toEqual([
      ['slow', 'openai'],
      ['fast', 'openai'],
      ['quick', 'openai'],
      ['offline', 'echo'],
    ]);
  });

  test('an unknown model is a 404 model_not_found in OpenAI shape: the openai client raises NotFoundError', async () => {
    const error = await client.chat.completions
      .create({ model: 'gpt-4o', messages: [user('hi')] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as APIError).error).toEqual({
      message: expect.stringContaining('"gpt-4o" does not exist'),
      type: 'invalid_request_error',
      param: null,
      code: 'model_not_found',
    });
    expect(slowUpstream.requestCount + fastUpstream.requestCount).toBe(0);
  });

  test('every /v1 404, 405 and 415 answers in OpenAI error shape', async () => {
    const missing = await fetch(`${sluice.url}/v1/embeddings`, { method: 'POST', body: '{}' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      error: {
        message: expect.any(String),
        type: 'invalid_request_error',
        param: null,
        code: 'route_not_found',
      },
    });
    const wrongMethod = await fetch(`${sluice.url}/v1/models`, { method: 'DELETE' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET');
    expect(await wrongMethod.json()).toMatchObject({ error: { code: 'method_not_allowed', param: null } });
    const text = await fetch(`${sluice.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hi',
    });
    expect(text.status).toBe(415);
    expect(await text.json()).toMatchObject({
      error: { code: 'unsupported_media_type', type: 'invalid_request_error', param: null },
    });
    // Outside /v1 the daemon's own shape stays.
    expect(await (await fetch(`${sluice.url}/nowhere`)).json()).toEqual({
      error: 'Route GET /nowhere not found',
    });
  });

  test('a call names its model or an alias: the upstream gets its model id and the key from its variable', async () => {
    const completion = await client.chat.completions.create({ model: 'quick', messages: [user('hi')] });
    expect(completion.choices[0]!.message.content).toBe('fast answer');
    expect(completion.model).toBe('fast');
    const request = fastUpstream.requests.at(-1)!;
    expect(request.body['model']).toBe('up-fast');
    expect(request.headers['authorization']).toBe('Bearer sk-from-env');
    const offline = await client.chat.completions.create({ model: 'offline', messages: [user('echo me')] });
    expect(offline.model).toBe('offline');
  });

  test('a slow model saturated with calls does not delay a call to the other: each has its own slots', async () => {
    const held = new AbortController();
    const slowCalls = [1, 2].map(() =>
      client.chat.completions
        .create({ model: 'slow', messages: [user('hold')] }, { signal: held.signal })
        .catch(() => undefined),
    );
    const snapshot = async () =>
      (await (await fetch(`${sluice.url}/runtime/snapshot`)).json()) as Record<string, unknown>;
    const slow = sluice.daemon.models.get('slow').runtime;
    await expect.poll(() => slow.schedulerSnapshot().executing).toBe(1);
    await expect.poll(() => slow.schedulerSnapshot().queued).toBe(1);
    // The slow model is full: its one slot and its one queue place are taken.
    const refused = await client.chat.completions
      .create({ model: 'slow', messages: [user('no room')] })
      .catch((caught: unknown) => caught as APIError);
    expect(refused).toMatchObject({ status: 429, error: { code: 'model_overloaded' } });
    const started = performance.now();
    const fast = await client.chat.completions.create({ model: 'fast', messages: [user('now')] });
    const fastMs = performance.now() - started;
    expect(fast.choices[0]!.message.content).toBe('fast answer');
    expect(fastMs).toBeLessThan(2_000);
    expect(slow.schedulerSnapshot().executing).toBe(1);
    // The operator sees each model's own slots and queue: the snapshot, and `sluice status`.
    const models = (await snapshot())['models'] as Array<Record<string, unknown>>;
    expect(models.map((m) => [m['model'], m['provider'], m['executing'], m['queued']])).toEqual([
      ['slow', 'openai', 1, 1],
      ['fast', 'openai', 0, 0],
      ['offline', 'echo', 0, 0],
    ]);
    const text = statusText(
      await readStatus(new DaemonReader(sluice.url, undefined), 10, Date.now()),
      Date.now(),
    );
    expect(text).toContain('  slow (openai)  accepting  executing 1/1  queued 1/1');
    expect(text).toContain('  fast (openai)  accepting  executing 0/2');
    // And /metrics, its `model` label bounded by the catalogue.
    const metrics = new Scrape(await (await fetch(`${sluice.url}/metrics`)).text());
    expect(metrics.value('sluice_catalogue_model_calls', { model: 'slow', state: 'executing' })).toBe(1);
    expect(metrics.value('sluice_catalogue_model_calls', { model: 'slow', state: 'queued' })).toBe(1);
    expect(metrics.value('sluice_catalogue_model_calls', { model: 'fast', state: 'executing' })).toBe(0);
    expect(metrics.value('sluice_catalogue_model_limit', { model: 'fast', limit: 'maxConcurrency' })).toBe(2);
    expect(metrics.value('sluice_catalogue_model_refusals_total', { model: 'slow' })).toBe(1);
    expect(metrics.value('sluice_catalogue_model_refusals_total', { model: 'fast' })).toBeUndefined();
    held.abort();
    await Promise.all(slowCalls);
  });
});

describe('fallbacks', () => {
  let primary: FakeOpenAIServer;
  let backup: FakeOpenAIServer;
  let sluice: InProcessDaemon;
  let client: OpenAI;
  let session = 0;
  beforeAll(async () => {
    primary = await startFakeOpenAIServer();
    backup = await startFakeOpenAIServer({ reply: { text: 'from the backup' } });
    sluice = await startCatalogue([
      upstreamModel('main', primary, { fallbacks: ['spare'] }),
      upstreamModel('spare', backup),
    ]);
    client = new OpenAI({ baseURL: `${sluice.url}/v1`, apiKey: 'anything', maxRetries: 0 });
  });
  afterAll(async () => {
    await sluice?.stop();
    await primary?.close();
    await backup?.close();
  });

  /** A client whose calls are journaled under a session of their own. */
  function attributed(): { agent: OpenAI; sessionId: string } {
    const sessionId = `sess-fallback-${++session}`;
    const token = sluice.daemon.credentials.issue(sessionId);
    return { agent: new OpenAI({ baseURL: `${sluice.url}/v1`, apiKey: token, maxRetries: 0 }), sessionId };
  }

  test('the primary answers 503, the fallback answers: one answer naming it, both attempts journaled and linked', async () => {
    primary.reply({ status: 503 });
    const before = backup.requestCount;
    const { agent, sessionId } = attributed();
    const completion = await agent.chat.completions.create({ model: 'main', messages: [user('hi')] });
    expect(completion.choices[0]!.message.content).toBe('from the backup');
    expect(completion.model).toBe('spare');
    expect(backup.requestCount).toBe(before + 1);

    const records = await sluice.daemon.journal.recordsForSession!(sessionId);
    const requests = records.filter((r): r is ModelRequestRecord => r.type === 'model_request');
    const results = records.filter((r): r is ModelResultRecord => r.type === 'model_result');
    expect(requests.map((r) => r.options.model)).toEqual(['up-main', 'up-spare']);
    expect(requests[0]!.options.fallbackOf).toBeUndefined();
    expect(requests[1]!.options.fallbackOf).toBe(requests[0]!.callId);
    expect(results.map((r) => [r.callId, r.outcome])).toEqual([
      [requests[0]!.callId, 'error'],
      [requests[1]!.callId, 'success'],
    ]);
  });

  test('a 400 from the primary is not retried on the fallback', async () => {
    primary.reply({ status: 400, error: { message: 'bad seed', code: 'bad_seed' } });
    const before = backup.requestCount;
    const error = (await client.chat.completions
      .create({ model: 'main', messages: [user('hi')] })
      .catch((caught: unknown) => caught)) as APIError;
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ message: 'bad seed', code: 'bad_seed' });
    expect(backup.requestCount).toBe(before);
  });

  test('429 and an unreachable primary fall back too; a streamed call falls back before its first chunk', async () => {
    primary.reply({ status: 429, headers: { 'retry-after': '3' } });
    const limited = await client.chat.completions.create({ model: 'main', messages: [user('hi')] });
    expect(limited.model).toBe('spare');

    primary.reply({ status: 502 });
    const stream = await client.chat.completions.create({
      model: 'main',
      messages: [user('hi')],
      stream: true,
    });
    let text = '';
    const models = new Set<string>();
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      models.add(chunk.model);
    }
    expect(text).toBe('from the backup');
    expect([...models]).toEqual(['spare']);
  });

  test('a stream that fails after its first chunk reached the client is not retried', async () => {
    primary.reply({ text: 'one two three', hangAfterChunks: 1 });
    const before = backup.requestCount;
    const { agent } = attributed();
    const stream = await agent.chat.completions.create(
      { model: 'main', messages: [user('hi')], stream: true },
      { timeout: 10_000 },
    );
    const chunks: string[] = [];
    const read = (async () => {
      for await (const chunk of stream) chunks.push(chunk.choices[0]?.delta.content ?? '');
    })().catch((error: unknown) => error);
    await expect.poll(() => chunks.join('')).toContain('one');
    // The upstream goes away mid-stream: the call fails, on the primary alone.
    const restart = primary.close();
    await read;
    await restart;
    expect(backup.requestCount).toBe(before);
  });
});
