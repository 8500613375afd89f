import { EchoProvider, type JournalRecord } from '@sluice/runtime';
import { FakeClock } from '@sluice/runtime/testing';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { DaemonTap } from '../../src/observe/index.js';
import { api, openEvents, textPrompt, type EventStream, type SseFrame } from '../helpers/http-client.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';
import { Scrape } from '../helpers/prometheus-text.js';
import { until } from '../helpers/until.js';

// Issue 20 "Observe", acceptance: /metrics scraped after a scripted workload over real HTTP (the
// real SQLite journal and session store, the built-in chat agent and echo model) reports exactly
// what the workload did. The echo model answers on a fake clock, so each turn ends when the test
// says; everything else runs for real.

const echoClock = new FakeClock();
let sluice: InProcessDaemon;
let events: EventStream;
let sessionA: string;
let sessionB: string;

const terminal = (promptId: string) => (f: SseFrame) =>
  (f.event === 'turn_complete' || f.event === 'turn_error') && f.data.promptId === promptId;

async function scrape(): Promise<Scrape> {
  const res = await fetch(`${sluice.url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return new Scrape(await res.text());
}

/** Lets the echo model answer the call it is holding: once it holds one, advance its clock. */
async function answerOneCall(): Promise<void> {
  await until(() => echoClock.pendingTimers > 0, 'a model call waits on the echo clock', 20_000);
  echoClock.advance(1_000);
}

async function prompt(sessionId: string, text: string, extra: object = {}) {
  return api(sluice.url, 'POST', `/session/${sessionId}/prompt`, { body: { ...textPrompt(text), ...extra } });
}

/** The prompts' texts: words no metric name or help text holds. */
const FRUIT = ['kumquat', 'tamarind', 'rambutan', 'longan', 'durian', 'jackfruit', 'salak', 'mangosteen'];

let mid: Scrape;
let final: Scrape;
const admitted: string[] = [];

beforeAll(async () => {
  sluice = await startInProcess(
    { modelMaxConcurrency: 1, modelMaxQueued: 0, maxPendingPromptsPerSession: 5 },
    { tap: new DaemonTap(), provider: new EchoProvider({ latencyMs: 1_000, clock: echoClock }) },
  );
  await sluice.daemon.recover();
  sessionA = (await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread' } })).body.sessionId;
  events = await openEvents(sluice.url, sessionA);

  // Five prompts fill session A (the first one's model call holds the one slot), two more are refused.
  for (const text of FRUIT.slice(0, 5)) {
    const res = await prompt(sessionA, text);
    expect(res.status).toBe(202);
    admitted.push(res.body.promptId);
  }
  for (let i = 0; i < 2; i++) expect((await prompt(sessionA, FRUIT[5]!)).body.code).toBe('prompt_queue_full');
  // The fifth leaves the queue (cancelled); a sixth takes its place with a 1 ms deadline, which
  // passes while it waits behind the held turn (failed, prompt_deadline_exceeded).
  const removed = await api(sluice.url, 'DELETE', `/session/${sessionA}/pending-prompts/${admitted[4]}`);
  expect(removed.body).toEqual({ removed: true });
  const late = await prompt(sessionA, FRUIT[6]!, { deadlineMs: 1 });
  expect(late.status).toBe(202);
  const lateEnd = await events.waitFor(terminal(late.body.promptId));
  expect(lateEnd.data.data.code).toBe('prompt_deadline_exceeded');
  // A model call through the gateway finds the one slot taken: refused, model_overloaded.
  await until(
    async () => (await api(sluice.url, 'GET', '/runtime/snapshot')).body.executing === 1,
    'the first turn executes',
    20_000,
  );
  const overloaded = await api(sluice.url, 'POST', '/v1/chat/completions', {
    body: { model: 'echo-1', messages: [{ role: 'user', content: 'hi' }] },
  });
  expect(overloaded.status).toBe(429);
  mid = await scrape();

  // The four left run one after another; then one prompt on a second session.
  for (const promptId of admitted.slice(0, 4)) {
    await answerOneCall();
    expect((await events.waitFor(terminal(promptId))).event).toBe('turn_complete');
  }
  sessionB = (await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread' } })).body.sessionId;
  const last = await prompt(sessionB, FRUIT[7]!);
  expect(last.status).toBe(202);
  const eventsB = await openEvents(sluice.url, sessionB);
  await answerOneCall();
  await eventsB.waitFor(terminal(last.body.promptId));
  eventsB.close();
  await until(
    async () => (await api(sluice.url, 'GET', '/runtime/snapshot')).body.inflight === 0,
    'every model call is cleaned up',
    20_000,
  );
  await until(
    () => sluice.daemon.bridge.streams.totalSubscriberCount === 1,
    'the stream of session B is released',
    20_000,
  );
  final = await scrape();
});

afterAll(async () => {
  events?.close();
  await sluice?.stop();
});

test('prompts: admitted and refused by code count what the clients were answered', () => {
  expect(final.value('sluice_prompts_admitted_total')).toBe(7);
  expect(final.series('sluice_prompts_refused_total')).toEqual([
    { labels: { code: 'prompt_queue_full' }, value: 2 },
  ]);
  expect(final.types.get('sluice_prompts_admitted_total')).toBe('counter');
});

test('turns: every terminal event is counted once, by outcome and code', () => {
  expect(final.series('sluice_turns_total').sort((a, b) => a.value - b.value)).toEqual([
    { labels: { outcome: 'cancelled', code: 'cancelled' }, value: 1 },
    { labels: { outcome: 'failed', code: 'prompt_deadline_exceeded' }, value: 1 },
    { labels: { outcome: 'completed', code: 'end_turn' }, value: 5 },
  ]);
});

test('model calls: five completed, one refused model_overloaded, each phase timed once per finished call', () => {
  expect(final.value('sluice_model_calls_total', { outcome: 'completed', code: 'end_turn' })).toBe(5);
  expect(final.value('sluice_model_calls_total', { outcome: 'refused', code: 'model_overloaded' })).toBe(1);
  expect(final.series('sluice_model_calls_total')).toHaveLength(2);
  for (const phase of ['queue_wait', 'recording', 'execution', 'cleaning']) {
    expect(final.value(`sluice_model_${phase}_seconds_count`), phase).toBe(5);
    expect(final.value(`sluice_model_${phase}_seconds_bucket`, { le: '+Inf' }), phase).toBe(5);
  }
  expect(final.types.get('sluice_model_execution_seconds')).toBe('histogram');
});

test('budget spend: the tokens counted are the usage the journal recorded', async () => {
  const records = [
    ...(await sluice.daemon.journal.recordsForSession!(sessionA)),
    ...(await sluice.daemon.journal.recordsForSession!(sessionB)),
  ];
  const results = records.filter(
    (r): r is Extract<JournalRecord, { type: 'model_result' }> => r.type === 'model_result',
  );
  expect(results).toHaveLength(5);
  const sum = (pick: (u: { inputTokens: number; outputTokens: number }) => number) =>
    results.reduce((total, r) => total + pick(r.usage!), 0);
  expect(final.value('sluice_model_tokens_total', { direction: 'input' })).toBe(sum((u) => u.inputTokens));
  expect(final.value('sluice_model_tokens_total', { direction: 'output' })).toBe(sum((u) => u.outputTokens));
  expect(sum((u) => u.outputTokens)).toBeGreaterThan(0);
});

test('journal: the committed batches hold the two records of each of the five calls', () => {
  expect(final.value('sluice_journal_batch_records_sum')).toBe(10);
  const batches = final.value('sluice_journal_batch_records_count')!;
  expect(batches).toBeGreaterThanOrEqual(5);
  expect(final.value('sluice_journal_commit_duration_seconds_count')).toBe(batches);
  expect(final.value('sluice_journal_interrupted_calls')).toBe(0);
});

test('while the first turn held the slot: scheduler gauges against their limits, pending prompts per session', () => {
  expect(mid.value('sluice_model_calls_executing')).toBe(1);
  expect(mid.value('sluice_model_calls_inflight')).toBe(1);
  expect(mid.value('sluice_model_calls_queued')).toBe(0);
  expect(mid.value('sluice_model_max_concurrency')).toBe(1);
  expect(mid.value('sluice_model_max_queued')).toBe(0);
  expect(mid.value('sluice_model_max_inflight')).toBe(64);
  expect(mid.value('sluice_pending_prompts')).toBe(4);
  expect(mid.series('sluice_session_pending_prompts')).toEqual([
    { labels: { session_id: sessionA }, value: 4 },
  ]);
  expect(mid.value('sluice_prompts_admitted_total')).toBe(6);
  expect(mid.value('sluice_model_calls_total', { outcome: 'refused', code: 'model_overloaded' })).toBe(1);
});

test('after the workload: nothing pending, the streams and ring bytes as the daemon holds them', () => {
  expect(final.value('sluice_pending_prompts')).toBe(0);
  expect(final.series('sluice_session_pending_prompts')).toEqual([]);
  expect(final.value('sluice_sessions')).toBe(2);
  expect(final.value('sluice_model_calls_inflight')).toBe(0);
  expect(final.value('sluice_sse_subscribers')).toBe(1);
  expect(final.value('sluice_sse_evictions_total')).toBe(0);
  expect(final.value('sluice_event_ring_bytes')).toBe(sluice.daemon.bridge.streams.memory.bytes);
  expect(final.value('sluice_event_ring_bytes')).toBeGreaterThan(0);
  expect(final.value('sluice_agent_processes')).toBe(0);
  expect(final.value('process_cpu_user_seconds_total')).toBeGreaterThan(0);
});

test('no prompt text in the scrape', () => {
  for (const text of [...FRUIT, 'Echo']) expect(final.text).not.toContain(text);
});
