import { expect, test } from 'vitest';
import {
  PromptQueueFullError,
  SessionBridge,
  SessionBuses,
  SessionNotFoundError,
} from '../../src/sessions/index.js';
import {
  DaemonTap,
  Distribution,
  LabeledCounts,
  OTHER_LABEL,
  RecentRefusals,
} from '../../src/observe/index.js';

test('a distribution counts each value in the first bucket whose bound holds it, cumulatively', () => {
  const d = new Distribution([0.1, 1, 10]);
  for (const value of [0.05, 0.1, 0.5, 3, 100]) d.observe(value);
  expect(d.cumulative()).toEqual([2, 3, 4]);
  expect(d.count).toBe(5);
  expect(d.sum).toBeCloseTo(103.65);
});

test('a distribution refuses bounds that are not ascending, naming them', () => {
  expect(() => new Distribution([1, 1])).toThrow('bounds must be finite and ascending, got [1, 1]');
  expect(() => new Distribution([])).toThrow(/at least one/);
});

test('labeled counts keep at most maxSeries series: codes past the cap count as "other"', () => {
  const counts = new LabeledCounts(['outcome', 'code'], 4);
  for (let i = 0; i < 10; i++) counts.inc('failed', `code_${i}`);
  counts.inc('failed', 'code_0');
  const entries = counts.entries();
  expect(entries).toHaveLength(4);
  expect(entries.map((e) => e.labels['code'])).toEqual(['code_0', 'code_1', 'code_2', OTHER_LABEL]);
  expect(counts.get('failed', 'code_0')).toBe(2);
  expect(counts.get(OTHER_LABEL, OTHER_LABEL)).toBe(7);
  expect(counts.total()).toBe(11);
});

test('labeled counts put a value that is not code-shaped under "unknown", never in the label', () => {
  const counts = new LabeledCounts(['code'], 8);
  counts.inc('has "quotes" and\nnewlines');
  counts.inc('has "quotes" and\nnewlines');
  expect(counts.entries()).toEqual([{ labels: { code: 'unknown' }, value: 2 }]);
});

test('recent refusals: one entry per kind, the most recent first, the least recent pushed out', () => {
  let now = 1_000;
  const recent = new RecentRefusals(3, () => now);
  let messages = 0;
  const message = () => `message ${++messages}`;
  recent.add('prompt', 'prompt_queue_full', 's1', message);
  now = 2_000;
  recent.add('prompt', 'prompt_queue_full', 's1', message);
  recent.add('model', 'model_overloaded', undefined, message);
  now = 3_000;
  recent.add('prompt', 'prompt_queue_full', 's1', message);
  recent.add('prompt', 'prompt_queue_full', 's2', message);
  recent.add('prompt', 'session_not_found', 's3', message);
  expect(recent.list().map((r) => [r.code, r.sessionId, r.count, r.firstAt, r.lastAt])).toEqual([
    ['session_not_found', 's3', 1, 3_000, 3_000],
    ['prompt_queue_full', 's2', 1, 3_000, 3_000],
    ['prompt_queue_full', 's1', 3, 1_000, 3_000],
  ]);
  expect(messages).toBe(5); // the repeat of the latest kind read no message
});

test('recent refusals keep the latest message of a kind, bounded to 200 characters', () => {
  const recent = new RecentRefusals(2, () => 0);
  recent.add('prompt', 'invalid_prompt', 's1', () => 'x'.repeat(500));
  expect(recent.list()[0]!.message).toBe(`${'x'.repeat(200)}…`);
});

test('SSE evictions: a subscriber whose queue overflows is counted once, and leaves the subscriber count', () => {
  const buses = new SessionBuses(100);
  const bus = buses.busFor('s1');
  const slow = bus.subscribe({ maxQueued: 16 });
  bus.subscribe({ maxQueued: 16 }).close();
  expect(buses.totalSubscriberCount).toBe(1);
  for (let i = 0; i < 40; i++) buses.publish('s1', { type: 'session_update', data: { i } });
  expect(buses.evictedSubscribers).toBe(1);
  while (slow.tryRead() !== undefined);
  expect(slow.endReason).toBe('evicted');
  expect(buses.totalSubscriberCount).toBe(0);
});

test('admission counts every door of the bridge once: a throw, a full queue, an Idempotency-Key replay admits nothing', () => {
  const tap = new DaemonTap();
  const bridge = new SessionBridge({
    agent: { runTurn: () => new Promise(() => {}) }, // never finishes: prompts stay pending
    maxPendingPromptsPerSession: 2,
    admissions: tap.prompts,
    workspaces: ['/'],
  });
  const { sessionId } = bridge.createSession({ scope: 'thread', cwd: '/' });
  const prompt = [{ type: 'text' as const, text: 'hi' }];
  const idempotency = { key: 'k-1', fingerprint: 'f-1' };
  bridge.sendPrompt(sessionId, prompt, { idempotency }).done.catch(() => {});
  bridge.sendPrompt(sessionId, prompt, { idempotency }); // a retry: the first admission again
  const third = bridge.trySendPrompt(sessionId, prompt);
  if (third instanceof PromptQueueFullError) throw third;
  third.done.catch(() => {});
  expect(() => bridge.sendPrompt(sessionId, prompt)).toThrow(PromptQueueFullError);
  expect(bridge.trySendPrompt(sessionId, prompt)).toBeInstanceOf(PromptQueueFullError);
  expect(() => bridge.sendPrompt('no-such-session', prompt)).toThrow(SessionNotFoundError);
  expect(tap.prompts.admittedPrompts).toBe(2);
  expect(tap.prompts.refusals.entries()).toEqual([
    { labels: { code: 'prompt_queue_full' }, value: 2 },
    { labels: { code: 'session_not_found' }, value: 1 },
  ]);
});
