import type { Clock, TimerHandle } from '../clock.js';
import { LinkedQueue, type QueueNode } from './linked-queue.js';

/**
 * Something with a fixed absolute deadline, kept by {@link DeadlineTimers}. It is its own node
 * in the group that watches it, so watching it allocates nothing.
 */
export interface Deadlined<T> extends QueueNode<T> {
  readonly timeoutMs: number;
  readonly deadline: number;
  /** @internal how it is watched: in its owner's order, in a group, or not at all */
  deadlineGroup: LinkedQueue<T> | typeof IN_ORDER | undefined;
}

/** Marks an entry watched through its owner's order rather than linked into a group. */
export const IN_ORDER = 'in-order';

/**
 * A list its owner already keeps its entries in, in the order they were added: entries with
 * `timeoutMs` are watched through it (see {@link DeadlineTimers}).
 */
export interface DeadlineOrder<T> {
  readonly timeoutMs: number;
  /** The entry after `entry` in the owner's list. */
  next(entry: T): T | undefined;
}

/**
 * Enforces many absolute deadlines with one clock timer; add, remove and expiry are O(1) per
 * entry, and the timer is re-armed only when an earlier deadline appears.
 *
 * The entries with the `order`'s timeout — the default, which most calls have — need no list
 * of their own: the owner keeps them in admission order already, and admission time only
 * grows, so that order is their deadlines' order. Watching one is a mark, and a cursor walks
 * the owner's list when the timer fires, passing each entry once. The owner tells {@link left}
 * before an entry leaves its list. Entries with any other timeout are queued in a group per
 * timeout, where deadlines arrive in order too.
 */
export class DeadlineTimers<T extends Deadlined<T>> {
  private readonly groups = new Map<number, LinkedQueue<T>>();
  /** The first entry of the owner's list that may still be watched in order. */
  private cursor: T | undefined;
  private watchedInOrder = 0;
  private timer: TimerHandle | undefined;
  private armedAt = Infinity;

  constructor(
    private readonly clock: Clock,
    private readonly expire: (entry: T) => void,
    private readonly order: DeadlineOrder<T>,
  ) {}

  /**
   * Starts watching `entry` until it expires or is {@link remove}d; it must not be watched
   * already. An entry with the order's timeout must be the last one of the owner's list.
   */
  add(entry: T): void {
    if (entry.deadlineGroup !== undefined) throw new RangeError('the entry is watched already');
    if (entry.timeoutMs === this.order.timeoutMs) {
      entry.deadlineGroup = IN_ORDER;
      this.watchedInOrder++;
      this.cursor ??= entry;
    } else {
      let group = this.groups.get(entry.timeoutMs);
      if (group === undefined) {
        group = new LinkedQueue<T>();
        this.groups.set(entry.timeoutMs, group);
      }
      group.link(entry);
      entry.deadlineGroup = group;
    }
    if (entry.deadline < this.armedAt) this.arm(entry.deadline);
  }

  /** Stops watching `entry`; a no-op when it is not watched. The timer goes away with the last entry. */
  remove(entry: T): void {
    const group = entry.deadlineGroup;
    if (group === undefined) return;
    entry.deadlineGroup = undefined;
    if (group === IN_ORDER) this.watchedInOrder--;
    else {
      group.remove(entry);
      if (group.size === 0 && this.groups.get(entry.timeoutMs) === group) this.groups.delete(entry.timeoutMs);
    }
    if (this.watchedInOrder === 0) {
      this.cursor = undefined;
      if (this.groups.size === 0) this.disarm();
    }
  }

  /** The owner is about to take `entry` out of its list. */
  left(entry: T): void {
    if (this.cursor === entry) this.cursor = this.order.next(entry);
  }

  private fire(): void {
    this.timer = undefined;
    this.armedAt = Infinity;
    const now = this.clock.now();
    // Expiring an entry may take it, or others, out of the owner's list: `left` then moves the
    // cursor, so the walk always resumes from the cursor.
    for (let entry = this.cursor; entry !== undefined; entry = this.cursor) {
      if (entry.deadlineGroup === IN_ORDER) {
        if (entry.deadline > now) break;
        entry.deadlineGroup = undefined;
        this.watchedInOrder--;
        this.expire(entry);
        if (this.cursor !== entry) continue;
      }
      this.cursor = this.order.next(entry);
    }
    if (this.watchedInOrder === 0) this.cursor = undefined;
    for (const [timeoutMs, group] of this.groups) {
      for (let head = group.peek(); head && head.deadline <= now; head = group.peek()) {
        group.dequeue();
        head.deadlineGroup = undefined;
        this.expire(head);
      }
      if (group.size === 0 && this.groups.get(timeoutMs) === group) this.groups.delete(timeoutMs);
    }
    let earliest = this.cursor?.deadlineGroup === IN_ORDER ? this.cursor.deadline : Infinity;
    for (const group of this.groups.values())
      earliest = Math.min(earliest, group.peek()?.deadline ?? Infinity);
    if (earliest < Infinity && earliest < this.armedAt) this.arm(earliest);
  }

  private arm(at: number): void {
    this.disarm();
    this.armedAt = at;
    this.timer = this.clock.setTimer(() => this.fire(), Math.max(0, at - this.clock.now()));
  }

  private disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.armedAt = Infinity;
  }
}
