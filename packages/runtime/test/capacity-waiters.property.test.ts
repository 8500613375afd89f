import fc from 'fast-check';
import { expect, test } from 'vitest';
import { CancelledError, OverloadedError, QueueTimeoutError, type ModelRuntimeError } from '../src/errors.js';
import { Job } from '../src/scheduler/job.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { FakeClock } from '../src/testing/index.js';

// Issue 26 item 7 (docs/decisions/029): calls of accepted prompts that find the scheduler full
// wait in a bounded FIFO list of the runtime and are admitted in arrival order as room frees,
// with no timer and no idle slot; outside calls are still refused at once (SCH-14).

/** A job that records what the scheduler told it. */
class Probe extends Job {
  readonly outcomes: string[] = [];
  waited = false;
  constructor(
    readonly index: number,
    readonly arrivedAt: number,
    private readonly log: Probe[],
  ) {
    super(`call-${index}`, 'task', undefined, 'complete', { messages: [] });
  }
  override entered(now: number): void {
    this.outcomes.push('entered');
    this.log.push(this);
    expect(now).toBeLessThan(this.deadline); // never admitted once its deadline passed
  }
  override turnedAway(reason: ModelRuntimeError): void {
    this.outcomes.push(`turned away: ${reason.code}`);
  }
}

type Op =
  | { op: 'arrive'; patient: boolean; timeoutMs: number | undefined }
  | { op: 'release' | 'finish' | 'cancel'; pick: number }
  | { op: 'advance'; ms: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('arrive' as const),
      patient: fc.boolean(),
      timeoutMs: fc.option(fc.integer({ min: 1, max: 5_000 }), { nil: undefined }),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constantFrom('release' as const, 'finish' as const, 'cancel' as const),
      pick: fc.nat(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 3_000 }) }),
  },
);

const configArb = fc.record({
  maxConcurrency: fc.integer({ min: 1, max: 3 }),
  maxQueued: fc.integer({ min: 0, max: 3 }),
  extra: fc.integer({ min: 0, max: 3 }),
  maxWaiting: fc.integer({ min: 0, max: 5 }),
});

test('issue 26 item 7: waiters are admitted in arrival order, never beside an idle slot, within their bound and deadline, and each ends once', () => {
  fc.assert(
    fc.property(configArb, fc.array(opArb, { minLength: 1, maxLength: 80 }), (config, ops) => {
      const clock = new FakeClock();
      const limits = {
        maxConcurrency: config.maxConcurrency,
        maxQueued: config.maxQueued,
        maxInflight: config.maxConcurrency + config.extra,
        maxWaiting: config.maxWaiting,
        defaultTimeoutMs: 4_000,
      };
      const scheduler = new Scheduler({ ...limits, clock });
      const entered: Probe[] = [];
      const jobs: Probe[] = [];
      const pick = <T>(list: T[], n: number): T | undefined => list[n % Math.max(1, list.length)];
      const check = (): void => {
        const s = scheduler.snapshot();
        const waiting = jobs.filter((job) => job.waiting);
        expect(s.waiting).toBe(waiting.length);
        expect(s.waiting).toBeLessThanOrEqual(limits.maxWaiting);
        expect(s.queued).toBeLessThanOrEqual(limits.maxQueued);
        expect(s.inflight).toBeLessThanOrEqual(limits.maxInflight);
        if (s.waiting > 0) {
          // No room anyone could be admitted into: no idle slot, no free queue place.
          const slotIdle = s.queued === 0 && s.preparing + s.executing < limits.maxConcurrency;
          const room = s.inflight < limits.maxInflight && (s.queued < limits.maxQueued || slotIdle);
          expect(room).toBe(false);
        }
      };
      for (const step of ops) {
        if (step.op === 'arrive') {
          const job = new Probe(jobs.length, clock.now(), entered);
          const waitersBefore = scheduler.snapshot().waiting;
          try {
            const admitted = scheduler.admit(job, step.timeoutMs, undefined, clock.now(), step.patient);
            job.waited = !admitted;
            if (!admitted) expect(step.patient).toBe(true);
            if (waitersBefore > 0) expect(admitted).toBe(false); // nobody overtakes a waiter
            jobs.push(job);
          } catch (error) {
            expect(error).toBeInstanceOf(OverloadedError);
            if (step.patient) expect(waitersBefore).toBe(limits.maxWaiting);
          }
        } else if (step.op === 'release') {
          const job = pick(
            jobs.filter((j) => j.holdsSlot),
            step.pick,
          );
          if (job) scheduler.releaseSlot(job);
        } else if (step.op === 'finish') {
          const job = pick(
            jobs.filter((j) => j.phase === 'Cleaning' && !j.finished),
            step.pick,
          );
          if (job) scheduler.finish(job);
        } else if (step.op === 'cancel') {
          const job = pick(
            jobs.filter((j) => !j.finished && !j.abortReason),
            step.pick,
          );
          if (job) {
            const wasWaiting = job.waiting;
            scheduler.abort(job, new CancelledError('host'));
            if (wasWaiting) expect(job.outcomes).toEqual(['turned away: model_cancelled']);
          }
        } else if (step.op === 'advance') clock.advance(step.ms);
        check();
      }
      // Let everything end: slots are released, cleanup finishes, deadlines pass.
      for (let round = 0; round < 1_000 && scheduler.inflight + scheduler.snapshot().waiting > 0; round++) {
        for (const job of jobs.filter((j) => j.holdsSlot)) scheduler.releaseSlot(job);
        for (const job of jobs.filter((j) => j.phase === 'Cleaning' && !j.finished)) scheduler.finish(job);
        check();
        clock.advance(1_000);
      }
      expect(scheduler.inflight).toBe(0);
      expect(scheduler.snapshot().waiting).toBe(0);
      // Arrival order: a waiter is admitted only after every waiter that arrived before it.
      const waiters = jobs.filter((job) => job.waited);
      const order = entered.map((job) => job.index);
      expect(order).toEqual([...order].sort((a, b) => a - b));
      for (const job of waiters) {
        // Each waiter ends exactly once: admitted, or turned away (deadline or cancel).
        expect(job.outcomes).toHaveLength(1);
        if (job.outcomes[0] === 'entered') {
          // Its deadline was fixed at its arrival, not at its admission.
          expect(job.admittedAt).toBe(job.arrivedAt);
          // Anyone who arrived before it and was still waiting then was admitted first.
          for (const earlier of waiters.filter((w) => w.index < job.index && w.outcomes[0] === 'entered'))
            expect(entered.indexOf(earlier)).toBeLessThan(entered.indexOf(job));
        }
      }
      for (const job of waiters.filter((w) => w.outcomes[0] === 'turned away: model_queue_timeout'))
        expect(job.abortReason).toBeInstanceOf(QueueTimeoutError);
    }),
    { numRuns: 300 },
  );
});
