import { describe, expect, test } from 'vitest';
import { HeldUpdates, MAX_HELD_BYTES, MAX_HELD_UPDATES } from '../../src/agents/acp/spare-sessions.js';
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
});
