import { EchoProvider, MemoryJournal, ModelRuntime } from '@sluice/runtime';
import { FakeClock } from '@sluice/runtime/testing';
import { expect, test } from 'vitest';
import { SessionBridge } from '../../src/sessions/index.js';
import {
  DaemonTap,
  DashboardFeed,
  DashboardViewerLimitError,
  type DashboardSnapshot,
} from '../../src/observe/index.js';
import type { ObservedDaemon } from '../../src/observe/index.js';

// The dashboard's stream on a fake clock: snapshots only while someone watches, one per
// interval, a chart of per-interval differences bounded to its history.

function observed(tap = new DaemonTap()): ObservedDaemon {
  const bridge = new SessionBridge({ agent: { runTurn: async () => ({ stopReason: 'end_turn' }) } });
  const runtime = new ModelRuntime({ provider: new EchoProvider(), journal: new MemoryJournal() });
  return { tap, runtime, bridge, agentPool: undefined };
}

test('no timer runs while nobody watches; a viewer gets a snapshot at once, then one per interval', () => {
  const clock = new FakeClock();
  const feed = new DashboardFeed(observed(), { clock, intervalMs: 1_000 });
  expect(clock.pendingTimers).toBe(0);
  const seen: DashboardSnapshot[] = [];
  const leave = feed.subscribe((snapshot) => seen.push(snapshot));
  expect(seen).toHaveLength(1);
  expect(clock.pendingTimers).toBe(1);
  clock.advance(3_000);
  expect(seen).toHaveLength(4);
  leave();
  expect(clock.pendingTimers).toBe(0);
  clock.advance(5_000);
  expect(seen).toHaveLength(4);
});

test('each point of the chart is what happened in its interval, and the chart keeps historyPoints', () => {
  const clock = new FakeClock();
  const tap = new DaemonTap();
  const feed = new DashboardFeed(observed(tap), { clock, intervalMs: 1_000, historyPoints: 3 });
  let last: DashboardSnapshot | undefined;
  feed.subscribe((snapshot) => (last = snapshot));
  const complete = (stopReason: string) =>
    tap.prompts.publish('s', { type: 'turn_complete', data: { stopReason } });
  for (let second = 1; second <= 5; second++) {
    for (let i = 0; i < second; i++) complete('end_turn');
    if (second === 5) complete('cancelled');
    tap.prompts.refused('s', { code: 'prompt_queue_full' });
    clock.advance(1_000);
  }
  expect(last!.series.map((p) => [p.completed, p.cancelled, p.refused])).toEqual([
    [3, 0, 1],
    [4, 0, 1],
    [5, 1, 1],
  ]);
  expect(last!.totals.turnsCompleted).toBe(15);
  expect(last!.refusals).toMatchObject([{ code: 'prompt_queue_full', sessionId: 's', count: 5 }]);
});

test('a watch after nobody watched starts a new chart', () => {
  const clock = new FakeClock();
  const tap = new DaemonTap();
  const feed = new DashboardFeed(observed(tap), { clock });
  const leave = feed.subscribe(() => {});
  clock.advance(2_000);
  leave();
  tap.prompts.admitted();
  let first: DashboardSnapshot | undefined;
  feed.subscribe((snapshot) => (first ??= snapshot));
  expect(first!.series).toEqual([]);
  expect(first!.totals.promptsAdmitted).toBe(1);
});

test('viewers are bounded: one more is refused with dashboard_viewer_limit', () => {
  const feed = new DashboardFeed(observed(), { clock: new FakeClock(), maxViewers: 2 });
  feed.subscribe(() => {});
  feed.subscribe(() => {});
  expect(() => feed.subscribe(() => {})).toThrow(DashboardViewerLimitError);
  expect(feed.viewerCount).toBe(2);
});

test('bad feed options are refused, naming the value', () => {
  expect(() => new DashboardFeed(observed(), { intervalMs: 0 })).toThrow(
    'intervalMs must be a positive integer, got 0',
  );
  expect(() => new DashboardFeed(observed(), { historyPoints: 1.5 })).toThrow(/historyPoints/);
});
