import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { EventBus, EventMemory } from '../../src/events/index.js';

// Issue 19 item 3: the replay windows are bounded by bytes, per session and daemon-wide.

const text = (chars: number): { text: string } => ({ text: 'x'.repeat(chars) });

describe('event ring byte budgets', () => {
  test('a ring over its byte budget drops its oldest events; replay from one says ring_evicted', async () => {
    const bus = new EventBus({ ringBytes: 10_000 });
    for (let i = 0; i < 10; i++) bus.publish({ type: 'session_update', data: text(1_000) });
    expect(bus.retainedBytes).toBeLessThanOrEqual(10_000);
    expect(bus.retainedEvents).toBeLessThan(10);
    expect(bus.earliestEventId).toBeGreaterThan(1);
    const replay = bus.subscribe({ lastEventId: 0 })[Symbol.asyncIterator]();
    const first = (await replay.next()).value as { type: string; json: string };
    expect(first.type).toBe('state_resync_required');
    expect(JSON.parse(first.json).data).toMatchObject({
      reason: 'ring_evicted',
      earliestAvailableId: bus.earliestEventId,
    });
    await replay.return?.();
  });

  test('the daemon-wide budget takes the oldest events of the largest ring first', () => {
    const memory = new EventMemory(30_000);
    const big = new EventBus({ memory });
    const small = new EventBus({ memory });
    small.publish({ type: 'session_update', data: text(1_000) });
    for (let i = 0; i < 20; i++) big.publish({ type: 'session_update', data: text(1_000) });
    expect(memory.bytes).toBeLessThanOrEqual(30_000);
    expect(memory.bytes).toBe(big.retainedBytes + small.retainedBytes);
    expect(small.retainedEvents).toBe(1); // the quiet session keeps its window
    big.dispose();
    expect(memory.bytes).toBe(small.retainedBytes);
  });

  test('a single event larger than the budget is delivered live but not kept for replay', () => {
    const bus = new EventBus({ ringBytes: 1_000 });
    bus.publish({ type: 'session_update', data: text(5_000) });
    expect(bus.retainedEvents).toBe(0);
    expect(bus.lastEventId).toBe(1);
    expect(bus.earliestEventId).toBe(2); // nothing left to replay
  });

  test('random publishes and disposals: the total is the sum of the rings, within budget', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({ kind: fc.constant('publish' as const), bus: fc.nat(4), chars: fc.nat(3_000) }),
            fc.record({ kind: fc.constant('dispose' as const), bus: fc.nat(4) }),
          ),
          { maxLength: 200 },
        ),
        fc.integer({ min: 1, max: 20_000 }),
        fc.integer({ min: 1, max: 50_000 }),
        (steps, ringBytes, totalBytes) => {
          const memory = new EventMemory(totalBytes);
          let buses = Array.from({ length: 5 }, () => new EventBus({ ringBytes, memory, ringSize: 16 }));
          for (const step of steps) {
            if (step.kind === 'publish') buses[step.bus]!.publish({ type: 't', data: text(step.chars) });
            else {
              buses[step.bus]!.dispose();
              buses = buses.map((bus, i) =>
                i === step.bus ? new EventBus({ ringBytes, memory, ringSize: 16 }) : bus,
              );
            }
            const sum = buses.reduce((total, bus) => total + bus.retainedBytes, 0);
            expect(memory.bytes).toBe(sum);
            expect(memory.bytes).toBeLessThanOrEqual(totalBytes);
            for (const bus of buses) expect(bus.retainedBytes).toBeLessThanOrEqual(ringBytes);
          }
        },
      ),
    );
  });
});
