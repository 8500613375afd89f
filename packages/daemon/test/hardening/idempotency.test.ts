import { afterEach, beforeEach, expect, test } from 'vitest';
import { api, openEvents, textPrompt } from '../helpers/http-client.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// Issue 19 item 12: a client that could not read the answer to its POST sends it again with
// the same Idempotency-Key and gets the first 202 back; nothing is admitted twice.

let sluice: InProcessDaemon;
let sessionId: string;
beforeEach(async () => {
  sluice = await startInProcess({ echoDelayMs: 200 });
  sessionId = (await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread' } })).body
    .sessionId;
});
afterEach(async () => {
  await sluice.stop();
});

const prompt = (key: string, text = 'hello') =>
  api(sluice.url, 'POST', `/session/${sessionId}/prompt`, {
    body: textPrompt(text),
    headers: { 'Idempotency-Key': key },
  });

test('a retry with the same key returns the first 202 body and admits nothing', async () => {
  const events = await openEvents(sluice.url, sessionId);
  const first = await prompt('key-1');
  const retry = await prompt('key-1');
  expect(first.status).toBe(202);
  expect(retry.status).toBe(202);
  expect(retry.body).toEqual(first.body);
  const pending = await api(sluice.url, 'GET', `/session/${sessionId}/pending-prompts`);
  expect(pending.body.pendingPrompts).toHaveLength(1);
  await events.waitFor((f) => f.event === 'turn_complete', 5_000);
  // Still the same answer once the prompt ended (within the session's lifetime).
  expect((await prompt('key-1')).body).toEqual(first.body);
  expect(
    events.frames.filter((f) => f.event === 'pending_prompt_added' || f.event === 'turn_complete'),
  ).toHaveLength(1);
  events.close();
});

test('the same key with a different prompt is refused with 422 and admits nothing', async () => {
  await prompt('key-2', 'one');
  const other = await prompt('key-2', 'two');
  expect(other.status).toBe(422);
  expect(other.body.code).toBe('idempotency_key_reused');
  const pending = await api(sluice.url, 'GET', `/session/${sessionId}/pending-prompts`);
  expect(pending.body.pendingPrompts).toHaveLength(1);
});

test('a refused prompt is not remembered: its retry with the same key is a new try', async () => {
  for (let i = 0; i < 5; i++) expect((await prompt(`fill-${i}`)).status).toBe(202);
  expect((await prompt('key-3')).status).toBe(503);
  const ended = await openEvents(sluice.url, sessionId);
  await ended.waitFor((f) => f.event === 'turn_complete', 5_000);
  ended.close();
  expect((await prompt('key-3')).status).toBe(202);
});

test('a malformed key is a 400 naming the rule', async () => {
  const bad = await prompt('k'.repeat(300));
  expect(bad.status).toBe(400);
  expect(bad.body.code).toBe('invalid_idempotency_key');
  expect(bad.body.message ?? bad.body.error).toMatch(/printable ASCII/);
});
