import { describe, expect, test } from 'vitest';
import { FakeClock } from '@sluice/runtime/testing';
import type { AgentProcess } from '../../src/agents/acp/agent-process.js';
import {
  HeldUpdates,
  MAX_EARLY_IDS,
  MAX_HELD_BYTES,
  MAX_HELD_UPDATES,
  SpareSessions,
} from '../../src/agents/acp/spare-sessions.js';
import type { SessionUpdate } from '../../src/sessions/index.js';

// What an agent sends for a session nobody reads yet (a spare, a create in flight) is kept in
// order, but within bounds: an agent that floods such a session cannot grow the daemon.

const update = (n: number): SessionUpdate =>
  ({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `${n}` } }) as SessionUpdate;

describe('updates held for a session not yet live', () => {
  test(`at most ${MAX_HELD_UPDATES} are kept, the first ones, in order; the rest are counted`, () => {
    const held = new HeldUpdates();
    for (let n = 0; n < MAX_HELD_UPDATES + 5; n++) held.add(update(n), 100);
    expect(held.updates).toHaveLength(MAX_HELD_UPDATES);
    expect(held.updates.at(-1)).toEqual(update(MAX_HELD_UPDATES - 1));
    expect(held.dropped).toBe(5);
  });

  test('at most MAX_HELD_BYTES of the agent’s lines are kept; a later small one still fits', () => {
    const held = new HeldUpdates();
    held.add(update(0), MAX_HELD_BYTES - 1_000);
    held.add(update(1), 2_000); // would pass the bound
    held.add(update(2), 500);
    expect(held.updates).toEqual([update(0), update(2)]);
    expect(held.dropped).toBe(1);
  });

  test(`while session/new runs, updates for at most ${MAX_EARLY_IDS} unknown session ids are kept`, () => {
    const spares = new SpareSessions({
      count: 0,
      clock: new FakeClock(),
      log: { warn: () => {}, info: () => {}, debug: () => {}, error: () => {} } as never,
      startTimeoutMs: 1_000,
      canAdd: () => false,
      cwdOf: () => undefined,
    });
    const proc = {} as AgentProcess; // only a key here
    spares.beginOpen(proc);
    spares.beginOpen(proc);
    for (let n = 0; n < MAX_EARLY_IDS + 10; n++) spares.hold(proc, `id-${n}`, update(n), 10);
    expect(spares.claim(proc, 'id-0')?.updates).toEqual([update(0)]);
    expect(spares.claim(proc, `id-${MAX_EARLY_IDS + 5}`)).toBeUndefined();
  });
});
