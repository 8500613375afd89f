import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, expect, test, vi } from 'vitest';
import type { ModelStreamEvent } from '@sluice/runtime';
import { api } from '../helpers/http-client.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// Issue 28 item 4: an unexpected error answers `500` without internals and was not logged. Each
// is logged once at `error` with fastify's request id and the error's stack — never prompt
// text — on every route, the model gateway's OpenAI-shaped errors included. A real pino logger
// writes the lines; the failure is a plain TypeError thrown by a part a route calls.

const lines: Array<Record<string, unknown>> = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line));
    done();
  },
});

let sluice: InProcessDaemon;
beforeAll(async () => {
  sluice = await startInProcess({}, {}, { logger: pino({ level: 'info' }, sink) });
});
afterAll(async () => {
  await sluice?.stop();
});
afterEach(() => {
  vi.restoreAllMocks();
  lines.length = 0;
});

const errorLines = (): Array<Record<string, unknown>> => lines.filter((line) => line['level'] === 50);

test('issue 28 item 4: a TypeError in a route answers 500 and logs one error line with the request id', async () => {
  vi.spyOn(sluice.daemon.runtime, 'schedulerSnapshot').mockImplementation(() => {
    throw new TypeError('snapshot exploded');
  });
  const res = await api(sluice.url, 'GET', '/runtime/snapshot');
  expect(res.status).toBe(500);
  expect(res.body).toEqual({ error: 'Internal server error' });
  expect(res.text).not.toContain('exploded');
  await expect.poll(() => errorLines().length).toBe(1);
  const [line] = errorLines();
  expect(line).toMatchObject({ msg: 'request failed', route: '/runtime/snapshot' });
  expect(line!['requestId']).toMatch(/^req-/);
  const err = line!['err'] as Record<string, unknown>;
  expect(err['type']).toBe('TypeError');
  expect(String(err['stack'])).toContain('snapshot exploded');
});

test('issue 28 item 4: the model gateway’s 500 server_error is logged once, without the prompt', async () => {
  vi.spyOn(sluice.daemon.runtime, 'complete').mockImplementation(() => {
    throw new TypeError('provider glue broke');
  });
  const res = await api(sluice.url, 'POST', '/v1/chat/completions', {
    body: { messages: [{ role: 'user', content: 'secret-prompt-marker' }] },
  });
  expect(res.status).toBe(500);
  expect(res.body.error).toMatchObject({ type: 'server_error', message: 'Internal server error' });
  await expect.poll(() => errorLines().length).toBe(1);
  expect(errorLines()[0]).toMatchObject({
    route: '/v1/chat/completions',
    requestId: expect.stringMatching(/^req-/),
  });
  expect(JSON.stringify(lines)).not.toContain('secret-prompt-marker');
});

test('issue 28 item 4: two failures log two lines with their own request ids', async () => {
  vi.spyOn(sluice.daemon.runtime, 'schedulerSnapshot').mockImplementation(() => {
    throw new TypeError('again');
  });
  await api(sluice.url, 'GET', '/runtime/snapshot');
  await api(sluice.url, 'GET', '/runtime/snapshot');
  await expect.poll(() => errorLines().length).toBe(2);
  const [first, second] = errorLines();
  expect(first!['requestId']).not.toBe(second!['requestId']);
});

test('issue 28 item 4: errors with a stable code, 4xx or 5xx, are not logged as internal', async () => {
  const missing = await api(sluice.url, 'GET', '/session/00000000-0000-4000-8000-000000000000/status');
  expect(missing.status).toBe(404);
  const bad = await api(sluice.url, 'POST', '/v1/chat/completions', { body: { messages: 'no' } });
  expect(bad.status).toBe(400);
  // A request that certainly logs, after them: had they logged, their lines would come first.
  vi.spyOn(sluice.daemon.runtime, 'schedulerSnapshot').mockImplementation(() => {
    throw new TypeError('marker');
  });
  await api(sluice.url, 'GET', '/runtime/snapshot');
  await expect.poll(() => errorLines().length).toBe(1);
  expect(errorLines()[0]!['route']).toBe('/runtime/snapshot');
});

test('issue 28 item 4: a streamed gateway call that fails after its head is logged once, with its request id', async () => {
  vi.spyOn(sluice.daemon.runtime, 'stream').mockImplementation(() => {
    async function* events(): AsyncGenerator<ModelStreamEvent> {
      yield { type: 'delta', text: 'half an answer' };
      throw new TypeError('stream glue broke');
    }
    return Object.assign(events(), { callId: 'call-1', cancel: () => {} }) as unknown as ReturnType<
      typeof sluice.daemon.runtime.stream
    >;
  });
  const res = await api(sluice.url, 'POST', '/v1/chat/completions', {
    body: { stream: true, messages: [{ role: 'user', content: 'secret-prompt-marker' }] },
  });
  expect(res.status).toBe(200);
  expect(res.text).toContain('half an answer');
  expect(res.text).toContain('Internal server error');
  await expect.poll(() => errorLines().length).toBe(1);
  expect(errorLines()[0]).toMatchObject({
    msg: 'request failed',
    route: '/v1/chat/completions',
    requestId: expect.stringMatching(/^req-/),
  });
  expect(String((errorLines()[0]!['err'] as Record<string, unknown>)['stack'])).toContain(
    'stream glue broke',
  );
  expect(JSON.stringify(lines)).not.toContain('secret-prompt-marker');
});
