import fc from 'fast-check';
import { expect, test } from 'vitest';
import { DeadlineTimers, type Deadlined, type IN_ORDER } from '../src/scheduler/deadline-timers.js';
import type { LinkedQueue, QueueNode } from '../src/scheduler/linked-queue.js';
import { FakeClock } from '../src/testing/index.js';

/** An entry kept, like a scheduler's jobs, in an admission-ordered list of its owner. */
class Entry implements Deadlined<Entry> {
  deadlineGroup: LinkedQueue<Entry> | typeof IN_ORDER | undefined = undefined;
  // Its node in a deadline group.
  prev: QueueNode<Entry> | undefined = undefined;
  next: QueueNode<Entry> | undefined = undefined;
  linked = false;
  // Its place in the owner's list.
  after: Entry | undefined = undefined;
  before: Entry | undefined = undefined;
  expired = 0;

  constructor(
    readonly id: number,
    readonly timeoutMs: number,
    readonly admittedAt: number,
  ) {}

  get value(): Entry {
    return this;
  }

  get deadline(): number {
    return this.admittedAt + this.timeoutMs;
  }
}

/** The owner's list, in the order entries were added. */
class OwnerList {
  head: Entry | undefined;
  tail: Entry | undefined;

  append(entry: Entry): void {
    entry.before = this.tail;
    if (this.tail) this.tail.after = entry;
    else this.head = entry;
    this.tail = entry;
  }

  remove(entry: Entry): void {
    if (entry.before) entry.before.after = entry.after;
    else this.head = entry.after;
    if (entry.after) entry.after.before = entry.before;
    else this.tail = entry.before;
    entry.before = entry.after = undefined;
  }
}

const DEFAULT_TIMEOUT = 100;

type Step =
  | { kind: 'add'; timeoutMs: number }
  | { kind: 'unwatch' | 'leave'; pick: number }
  | { kind: 'advance'; ms: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('add' as const), timeoutMs: fc.constantFrom(DEFAULT_TIMEOUT, 30, 250) }),
  fc.record({ kind: fc.constantFrom('unwatch' as const, 'leave' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 120 }) }),
);

test('SCH-6 every watched deadline expires once, at its instant and not before, whether watched in its owner’s order or in a group; the timer goes with the last entry', () => {
  fc.assert(
    fc.property(fc.array(stepArb, { minLength: 1, maxLength: 80 }), (steps) => {
      const clock = new FakeClock(0);
      const list = new OwnerList();
      const expiredAt = new Map<Entry, number>();
      const timers = new DeadlineTimers<Entry>(
        clock,
        (entry) => {
          entry.expired++;
          expiredAt.set(entry, clock.now());
          // Like a scheduler whose job finishes at once when its deadline aborts it.
          if (entry.id % 3 === 0) {
            timers.left(entry);
            list.remove(entry);
            inList.delete(entry);
          }
        },
        { timeoutMs: DEFAULT_TIMEOUT, next: (entry) => entry.after },
      );
      const watched = new Set<Entry>();
      const inList = new Set<Entry>();
      let ids = 0;
      const pick = <T>(items: Set<T>, n: number): T | undefined => [...items][n % Math.max(1, items.size)];

      for (const step of steps) {
        if (step.kind === 'add') {
          const entry = new Entry(ids++, step.timeoutMs, clock.now());
          list.append(entry);
          inList.add(entry);
          timers.add(entry);
          watched.add(entry);
        } else if (step.kind === 'unwatch') {
          const entry = pick(watched, step.pick);
          if (entry) timers.remove(entry);
        } else if (step.kind === 'leave') {
          // The owner drops an entry that is no longer watched (as the scheduler does on finish).
          const entry = pick(new Set([...inList].filter((e) => e.deadlineGroup === undefined)), step.pick);
          if (entry) {
            timers.remove(entry);
            timers.left(entry);
            list.remove(entry);
            inList.delete(entry);
          }
        } else if (step.kind === 'advance') {
          clock.advance(step.ms);
        }
        for (const entry of [...watched]) if (entry.deadlineGroup === undefined) watched.delete(entry);
        for (const entry of watched) expect(entry.deadline).toBeGreaterThan(clock.now());
        for (const [entry, at] of expiredAt) {
          expect(entry.expired).toBe(1);
          expect(at).toBe(entry.deadline);
        }
        expect(clock.pendingTimers).toBeLessThanOrEqual(1);
        if (watched.size === 0) expect(clock.pendingTimers).toBe(0);
      }
      clock.advance(1_000);
      for (const entry of watched) expect(entry.expired).toBe(1);
      expect(clock.pendingTimers).toBe(0);
    }),
    { numRuns: 500 },
  );
});
