import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ModelRuntime } from '../src/gateway/model-runtime.js';
import { MemoryJournal } from '../src/journal/memory-journal.js';
import type { SchedulerConfig } from '../src/scheduler/config.js';
import { TotalSlotCap } from '../src/scheduler/total-slot-cap.js';
import { FakeClock } from '../src/testing/index.js';
import { ask, track } from './helpers/runtime-fixture.js';
import { ScriptedProvider, settle } from './helpers/scripted-provider.js';

// Issue 29 item 1 (docs/decisions/037): an optional daemon-wide cap over all models' slots. Each
// model keeps its own scheduler and bounds; the cap is a second, shared bound on calls executing
// at once, decided synchronously at admission, granted in admission order across models.

/** Two models on one fake clock and one journal, `limits` each, their slots capped by `cap` together. */
function twoModels(cap: number, limits: SchedulerConfig) {
  const clock = new FakeClock();
  const journal = new MemoryJournal();
  const totalSlots = new TotalSlotCap(cap);
  const model = () => {
    const provider = new ScriptedProvider();
    const runtime = new ModelRuntime({ provider, journal, clock, scheduler: limits, totalSlots });
    return { provider, runtime };
  };
  return { clock, journal, totalSlots, a: model(), b: model() };
}

const running = (provider: ScriptedProvider) => provider.calls.filter((call) => !call.settled);

describe('a total slot cap over two models', () => {
  test('a call waiting for the cap runs when another model’s call ends', async () => {
    const { a, b } = twoModels(3, { maxConcurrency: 2, maxQueued: 4 });
    void a.runtime.complete(ask('a1'));
    void a.runtime.complete(ask('a2'));
    const b1 = track(b.runtime.complete(ask('b1')));
    const b2 = track(b.runtime.complete(ask('b2')));
    await settle();
    // Model b has a slot of its own free, but the cap is full: b2 queues in b's own queue.
    expect(running(a.provider)).toHaveLength(2);
    expect(running(b.provider)).toHaveLength(1);
    expect(b.runtime.schedulerSnapshot()).toMatchObject({
      queued: 1,
      executing: 1,
      totalSlots: { used: 3, limit: 3 },
    });
    a.provider.calls[0]!.succeed('a1 done');
    await settle();
    expect(running(b.provider).map((call) => call.request)).toEqual([ask('b1'), ask('b2')]);
    expect(a.runtime.schedulerSnapshot().totalSlots).toEqual({ used: 3, limit: 3 });
    for (const call of running(b.provider)) call.succeed();
    await settle();
    expect([b1.status, b2.status]).toEqual(['resolved', 'resolved']);
  });

  test('the slot goes to the call admitted first, whichever model it is for', async () => {
    const { clock, a, b } = twoModels(1, { maxConcurrency: 2, maxQueued: 4 });
    void a.runtime.complete(ask('a1'));
    void b.runtime.complete(ask('b-first'));
    clock.advance(1);
    void a.runtime.complete(ask('a-second'));
    await settle();
    a.provider.calls[0]!.succeed();
    await settle();
    expect(running(b.provider).map((call) => call.request)).toEqual([ask('b-first')]);
    expect(running(a.provider)).toHaveLength(0);
  });

  test('a call waiting for the cap counts in its model’s queue, and a full queue refuses at once', () => {
    const { a, b } = twoModels(2, { maxConcurrency: 2, maxQueued: 1 });
    void a.runtime.complete(ask());
    void a.runtime.complete(ask());
    void b.runtime.complete(ask());
    expect(() => b.runtime.complete(ask())).toThrow(
      expect.objectContaining({ code: 'model_overloaded', capacity: 'QueueFull' }),
    );
  });

  test('SCH-6: the deadline fixed at admission holds while the call waits for the cap', async () => {
    const { clock, journal, a, b } = twoModels(1, { maxConcurrency: 1, maxQueued: 2 });
    void a.runtime.complete(ask('holds the cap')).catch(() => undefined);
    const waiting = track(b.runtime.complete(ask('waits'), { timeoutMs: 2_000 }));
    await settle();
    clock.advance(1_999);
    await settle();
    expect(waiting.status).toBe('pending');
    clock.advance(1);
    await settle();
    expect(waiting.error).toMatchObject({ code: 'model_queue_timeout' });
    expect(b.provider.calls).toHaveLength(0);
    expect(b.runtime.schedulerSnapshot()).toMatchObject({ queued: 0, inflight: 0 });
    // Its result is recorded; the cap's one slot is still the running call's.
    expect(journal.records().filter((r) => r.type === 'model_result')).toHaveLength(1);
    expect(a.runtime.schedulerSnapshot().totalSlots).toEqual({ used: 1, limit: 1 });
  });

  test('a call cancelled while it waits for the cap frees its queue place and in-flight unit', async () => {
    const { a, b } = twoModels(1, { maxConcurrency: 1, maxQueued: 1, maxInflight: 2 });
    void a.runtime.complete(ask()).catch(() => undefined);
    const host = new AbortController();
    const cancelled = track(b.runtime.complete(ask('cancelled'), { signal: host.signal }));
    host.abort();
    await settle();
    expect(cancelled.error).toMatchObject({ code: 'model_cancelled' });
    expect(b.runtime.schedulerSnapshot()).toMatchObject({ queued: 0, inflight: 0 });
    void b.runtime.complete(ask('next'));
    a.provider.last().succeed();
    await settle();
    expect(running(b.provider).map((call) => call.request)).toEqual([ask('next')]);
  });

  test('a call of an accepted prompt that finds its model’s queue full waits, and gets the cap’s slot in turn', async () => {
    const { a, b } = twoModels(1, { maxConcurrency: 1, maxQueued: 0 });
    void a.runtime.complete(ask('a'));
    const patient = track(b.runtime.complete(ask('patient'), { waitForCapacity: true }));
    await settle();
    expect(b.runtime.schedulerSnapshot()).toMatchObject({ waiting: 1, inflight: 0 });
    a.provider.last().succeed();
    await settle();
    expect(running(b.provider).map((call) => call.request)).toEqual([ask('patient')]);
    b.provider.last().succeed();
    await settle();
    expect(patient.status).toBe('resolved');
  });

  test('the cap must be a positive integer, named when it is not', () => {
    for (const bad of [0, -1, 1.5, Number.NaN])
      expect(() => new TotalSlotCap(bad)).toThrow(`got ${String(bad)}`);
  });
});

type Op =
  | { op: 'call'; model: 0 | 1; patient: boolean; timeoutMs: number | undefined }
  | { op: 'succeed' | 'cancel'; pick: number }
  | { op: 'advance'; ms: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('call' as const),
      model: fc.constantFrom(0 as const, 1 as const),
      patient: fc.boolean(),
      timeoutMs: fc.option(fc.integer({ min: 1, max: 3_000 }), { nil: undefined }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({ op: fc.constantFrom('succeed' as const, 'cancel' as const), pick: fc.nat() }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 2_000 }) }),
  },
);

test('two models of 2 slots under a total cap of 3 never run more than 3 provider calls at once, and leave no slot idle', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { maxLength: 60 }), async (ops) => {
      const { clock, a, b } = twoModels(3, {
        maxConcurrency: 2,
        maxQueued: 2,
        maxInflight: 5,
        maxWaiting: 2,
      });
      const models = [a, b];
      const hosts: AbortController[] = [];
      const outcomes: Array<ReturnType<typeof track>> = [];
      let peak = 0;
      for (const step of ops) {
        if (step.op === 'call') {
          const host = new AbortController();
          try {
            const options = { signal: host.signal, waitForCapacity: step.patient, timeoutMs: step.timeoutMs };
            outcomes.push(track(models[step.model]!.runtime.complete(ask(), options)));
            hosts.push(host);
          } catch (error) {
            expect(error).toMatchObject({ code: 'model_overloaded' }); // refused at once, synchronously
          }
        } else if (step.op === 'advance') {
          clock.advance(step.ms);
        } else if (step.op === 'succeed') {
          const live = [...running(a.provider), ...running(b.provider)];
          live[step.pick % Math.max(1, live.length)]?.succeed();
        } else hosts[step.pick % Math.max(1, hosts.length)]?.abort();
        await settle();
        const runningNow = running(a.provider).length + running(b.provider).length;
        peak = Math.max(peak, runningNow);
        expect(runningNow).toBeLessThanOrEqual(3);
        const snapshots = models.map((model) => model.runtime.schedulerSnapshot());
        const held = snapshots.map((s) => s.preparing + s.executing);
        expect(snapshots[0]!.totalSlots).toEqual({ used: held[0]! + held[1]!, limit: 3 });
        for (const [i, s] of snapshots.entries()) {
          expect(held[i]).toBeLessThanOrEqual(2);
          // No slot stays idle while a call of a model with a slot of its own is queued.
          if (held[0]! + held[1]! < 3 && held[i]! < 2) expect(s.queued).toBe(0);
        }
      }
      // Everything still running ends; every call settles exactly once.
      for (let live = [...running(a.provider), ...running(b.provider)]; live.length > 0;) {
        for (const call of live) call.succeed();
        await settle();
        live = [...running(a.provider), ...running(b.provider)];
      }
      clock.advance(10_000);
      await settle();
      expect(outcomes.filter((o) => o.status === 'pending')).toEqual([]);
      expect(a.runtime.schedulerSnapshot().totalSlots).toEqual({ used: 0, limit: 3 });
      return peak <= 3;
    }),
    { numRuns: 150 },
  );
});
