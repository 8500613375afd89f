import fc from 'fast-check';
import { expect, test } from 'vitest';
import { ModelRuntime } from '../src/gateway/model-runtime.js';
import type { ModelStream } from '../src/gateway/model-gateway.js';
import { FaultInjectingJournal } from '../src/testing/fault-journal.js';
import { MemoryJournal } from '../src/journal/memory-journal.js';
import type { Job } from '../src/scheduler/job.js';
import { FakeClock } from '../src/testing/index.js';
import { ask } from './helpers/runtime-fixture.js';
import { ScriptedProvider, settle } from './helpers/scripted-provider.js';

type Op =
  | { op: 'complete' | 'stream'; timeoutMs: number | undefined }
  | { op: 'succeed' | 'fail' | 'delta' | 'cancel' | 'pull' | 'leave'; pick: number }
  | { op: 'hang' | 'stall' | 'resume' | 'journalFail' | 'shutdown' }
  | { op: 'advance'; ms: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constantFrom('complete' as const, 'stream' as const),
      timeoutMs: fc.option(fc.integer({ min: 1, max: 5_000 }), { nil: undefined }),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constantFrom(
        'succeed' as const,
        'fail' as const,
        'delta' as const,
        'cancel' as const,
        'pull' as const,
        'leave' as const,
      ),
      pick: fc.nat(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constantFrom('hang' as const, 'stall' as const, 'resume' as const, 'journalFail' as const),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 3_000 }) }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('shutdown' as const) }) },
);

const configArb = fc
  .record({
    maxConcurrency: fc.integer({ min: 1, max: 4 }),
    maxQueued: fc.integer({ min: 0, max: 6 }),
    extra: fc.integer({ min: 0, max: 6 }),
  })
  .map(({ maxConcurrency, maxQueued, extra }) => ({
    maxConcurrency,
    maxQueued,
    maxInflight: maxConcurrency + extra,
    defaultTimeoutMs: 4_000,
  }));

interface Caller {
  index: number;
  controller: AbortController;
  settledCount: number;
  stream?: ModelStream;
  iterator?: AsyncIterator<unknown>;
  pulling: boolean;
  /** The consumer called return(); an outstanding next() must still settle, but counts no more. */
  left?: boolean;
}

test('SCH-1/4/5/9/12/13/15/16 random interleavings keep every count bounded, release exactly once and return to zero', async () => {
  await fc.assert(
    fc.asyncProperty(configArb, fc.array(opArb, { minLength: 1, maxLength: 60 }), async (config, ops) => {
      const clock = new FakeClock();
      const provider = new ScriptedProvider();
      const journal = new FaultInjectingJournal(new MemoryJournal());
      const admittedOrder = new Map<Job, number>();
      const granted: number[] = [];
      const slotReleases = new Map<Job, number>();
      const finishes = new Map<Job, number>();
      const runtime = new ModelRuntime({
        provider,
        journal,
        clock,
        scheduler: config,
        observer: {
          admitted: (job) => admittedOrder.set(job, admittedOrder.size),
          slotGranted: (job) => granted.push(admittedOrder.get(job) ?? -1),
          slotReleased: (job) => slotReleases.set(job, (slotReleases.get(job) ?? 0) + 1),
          finished: (job) => finishes.set(job, (finishes.get(job) ?? 0) + 1),
        },
      });
      const callers: Caller[] = [];
      let shutdown: Promise<void> | undefined;

      const check = () => {
        const s = runtime.schedulerSnapshot();
        expect(s.inflight).toBeLessThanOrEqual(config.maxInflight);
        expect(s.queued).toBeLessThanOrEqual(config.maxQueued);
        expect(s.preparing + s.executing).toBeLessThanOrEqual(config.maxConcurrency);
        // Work-conserving: nobody waits while a slot is idle.
        if (s.queued > 0) expect(s.preparing + s.executing).toBe(config.maxConcurrency);
        expect(s.jobs).toHaveLength(s.inflight);
        const count = (phase: string) => s.jobs.filter((j) => j.phase === phase).length;
        expect([count('Queued'), count('Preparing'), count('Executing'), count('Cleaning')]).toEqual([
          s.queued,
          s.preparing,
          s.executing,
          s.cleaning,
        ]);
        expect(clock.pendingTimers).toBeLessThanOrEqual(s.inflight);
        for (const n of slotReleases.values()) expect(n).toBe(1);
        for (const n of finishes.values()) expect(n).toBe(1);
        expect(granted).toEqual([...granted].sort((a, b) => a - b));
        for (const caller of callers) expect(caller.settledCount).toBeLessThanOrEqual(1);
      };

      const pick = <T>(items: T[], n: number): T | undefined =>
        items.length ? items[n % items.length] : undefined;
      const pullOnce = (caller: Caller) => {
        if (!caller.iterator || caller.pulling || caller.settledCount > 0) return;
        caller.pulling = true;
        caller.iterator.next().then(
          (step) => {
            caller.pulling = false;
            if (caller.left) return;
            if (step.done || (step.value as { type: string }).type === 'finished') caller.settledCount++;
          },
          () => {
            caller.pulling = false;
            if (!caller.left) caller.settledCount++;
          },
        );
      };

      for (const op of ops) {
        switch (op.op) {
          case 'complete':
          case 'stream': {
            const controller = new AbortController();
            const caller: Caller = { index: callers.length, controller, settledCount: 0, pulling: false };
            try {
              if (op.op === 'complete') {
                runtime.complete(ask(), { timeoutMs: op.timeoutMs, signal: controller.signal }).then(
                  () => caller.settledCount++,
                  () => caller.settledCount++,
                );
              } else {
                caller.stream = runtime.stream(ask(), { timeoutMs: op.timeoutMs, signal: controller.signal });
                caller.iterator = caller.stream[Symbol.asyncIterator]();
                pullOnce(caller);
              }
              callers.push(caller);
            } catch (error) {
              expect(error).toHaveProperty('code');
            }
            break;
          }
          case 'succeed':
            pick(
              provider.calls.filter((c) => !c.settled),
              op.pick,
            )?.succeed();
            break;
          case 'fail':
            pick(
              provider.calls.filter((c) => !c.settled),
              op.pick,
            )?.fail(new Error('provider error'));
            break;
          case 'delta':
            pick(
              provider.calls.filter((c) => !c.settled && c.kind === 'stream'),
              op.pick,
            )?.delta('chunk');
            break;
          case 'cancel':
            pick(callers, op.pick)?.controller.abort();
            break;
          case 'pull': {
            const caller = pick(
              callers.filter((c) => c.iterator),
              op.pick,
            );
            if (caller) pullOnce(caller);
            break;
          }
          case 'leave': {
            const caller = pick(
              callers.filter((c) => c.iterator && c.settledCount === 0),
              op.pick,
            );
            if (caller) {
              void caller.iterator?.return?.();
              caller.left = true;
              caller.settledCount++;
              caller.iterator = undefined;
            }
            break;
          }
          case 'hang':
            provider.ignoreAbort = !provider.ignoreAbort;
            break;
          case 'stall':
            journal.stall();
            break;
          case 'resume':
            journal.resume();
            break;
          case 'journalFail':
            journal.failNext(1, 'injected');
            break;
          case 'advance':
            clock.advance(op.ms);
            break;
          case 'shutdown':
            shutdown ??= runtime.shutdown();
            break;
        }
        await settle();
        check();
      }

      // Quiescence: the journal recovers, every deadline passes, every reader keeps reading.
      journal.resume();
      for (let round = 0; round < 6; round++) {
        for (const caller of callers) pullOnce(caller);
        clock.advance(10_000);
        await settle();
        check();
      }
      await runtime.shutdown();
      const s = runtime.schedulerSnapshot();
      expect([s.inflight, s.queued, s.preparing, s.executing, s.cleaning, s.jobs.length]).toEqual([
        0, 0, 0, 0, 0, 0,
      ]);
      expect(clock.pendingTimers).toBe(0);
      expect(finishes.size).toBe(admittedOrder.size);
      expect(slotReleases.size).toBe(granted.length);
      for (const caller of callers) expect(caller.settledCount).toBe(1);
      // No next() is left hanging, not even one outstanding when its consumer called return().
      for (const caller of callers) expect(caller.pulling).toBe(false);
      await shutdown;
    }),
    { numRuns: 300 },
  );
});
