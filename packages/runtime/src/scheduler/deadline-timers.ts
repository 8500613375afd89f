import type { Clock, TimerHandle } from '../clock.js';

/**
 * Something with a fixed absolute deadline, kept by {@link DeadlineTimers}. It is its own entry:
 * the links are its fields, so watching it allocates nothing.
 */
export interface Deadlined {
  readonly timeoutMs: number;
  readonly deadline: number;
  /** @internal the group it is watched in; undefined when not watched */
  deadlineGroup: DeadlineGroup<Deadlined> | undefined;
  /** @internal */
  deadlinePrev: Deadlined | undefined;
  /** @internal */
  deadlineNext: Deadlined | undefined;
}

/**
 * The entries sharing one timeout, in admission order. Admission time only grows, so their
 * deadlines are in order too: the head is always the earliest.
 */
export class DeadlineGroup<T extends Deadlined> {
  head: T | undefined;
  tail: T | undefined;
  size = 0;

  constructor(readonly timeoutMs: number) {}
}

/**
 * A list its owner already keeps its entries in, in the order they were added: entries with
 * `timeoutMs` are watched through it (see {@link DeadlineTimers}).
 */
export interface DeadlineOrder<T> {
  readonly timeoutMs: number;
  /** The entry after `entry` in the owner's list. */
  next(entry: T): T | undefined;
}

/** Marks an entry watched through the owner's order rather than linked into a group. */
const IN_ORDER = new DeadlineGroup<Deadlined>(Number.NaN);

/**
 * Enforces many absolute deadlines with one clock timer. Entries are grouped by timeout:
 * within a group deadlines arrive in order (admission time only grows), so add, remove and
 * expiry are O(1) per entry, and the timer is re-armed only when an earlier deadline appears.
 *
 * The entries with the `order`'s timeout — the default, which most calls have — need no group:
 * the owner keeps them in admission order already, so watching one is a mark, and a cursor
 * walks the owner's list when the timer fires, passing each entry once. The owner tells
 * {@link left} before an entry leaves its list.
 */
export class DeadlineTimers<T extends Deadlined> {
  private readonly groups = new Map<number, DeadlineGroup<T>>();
  /** The group the last entry joined (still in `groups` while it has entries). */
  private last: DeadlineGroup<T> | undefined;
  /** The first entry of the owner's list that may still be watched in order. */
  private cursor: T | undefined;
  private watchedInOrder = 0;
  private timer: TimerHandle | undefined;
  private armedAt = Infinity;

  constructor(
    private readonly clock: Clock,
    private readonly expire: (entry: T) => void,
    private readonly order?: DeadlineOrder<T>,
  ) {}

  /**
   * Starts watching `entry` until it expires or is {@link remove}d; it must not be watched
   * already. An entry with the order's timeout must be the last one of the owner's list.
   */
  add(entry: T): void {
    if (entry.deadlineGroup !== undefined) throw new RangeError('the entry is watched already');
    if (entry.timeoutMs === this.order?.timeoutMs) {
      entry.deadlineGroup = IN_ORDER;
      this.watchedInOrder++;
      this.cursor ??= entry;
    } else this.link(entry);
    if (entry.deadline < this.armedAt) this.arm(entry.deadline);
  }

  /** Stops watching `entry`; a no-op when it is not watched. The timer goes away with the last entry. */
  remove(entry: T): void {
    const group = entry.deadlineGroup as DeadlineGroup<T> | undefined;
    if (group === undefined) return;
    if (group === (IN_ORDER as DeadlineGroup<Deadlined>)) {
      entry.deadlineGroup = undefined;
      this.watchedInOrder--;
    } else {
      this.unlink(group, entry);
      if (group.size === 0 && this.groups.get(group.timeoutMs) === group) this.groups.delete(group.timeoutMs);
    }
    if (this.watchedInOrder === 0) {
      this.cursor = undefined;
      if (this.groups.size === 0) this.disarm();
    }
  }

  /** The owner is about to take `entry` out of its list. */
  left(entry: T): void {
    if (this.cursor === entry) this.cursor = this.order?.next(entry);
  }

  private link(entry: T): void {
    let group = this.last;
    if (group === undefined || group.timeoutMs !== entry.timeoutMs || group.size === 0) {
      group = this.groups.get(entry.timeoutMs);
      if (group === undefined) {
        group = new DeadlineGroup<T>(entry.timeoutMs);
        this.groups.set(entry.timeoutMs, group);
      }
      this.last = group;
    }
    entry.deadlineGroup = group as DeadlineGroup<Deadlined>;
    entry.deadlinePrev = group.tail;
    entry.deadlineNext = undefined;
    if (group.tail) group.tail.deadlineNext = entry;
    else group.head = entry;
    group.tail = entry;
    group.size++;
  }

  private unlink(group: DeadlineGroup<T>, entry: T): void {
    const prev = entry.deadlinePrev as T | undefined;
    const next = entry.deadlineNext as T | undefined;
    if (prev) prev.deadlineNext = next;
    else group.head = next;
    if (next) next.deadlinePrev = prev;
    else group.tail = prev;
    entry.deadlinePrev = entry.deadlineNext = entry.deadlineGroup = undefined;
    group.size--;
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
      this.cursor = this.order?.next(entry);
    }
    if (this.watchedInOrder === 0) this.cursor = undefined;
    for (const [timeoutMs, group] of this.groups) {
      for (let head = group.head; head && head.deadline <= now; head = group.head) {
        this.unlink(group, head);
        this.expire(head);
      }
      if (group.size === 0 && this.groups.get(timeoutMs) === group) this.groups.delete(timeoutMs);
    }
    let earliest = this.cursor?.deadlineGroup === IN_ORDER ? this.cursor.deadline : Infinity;
    for (const group of this.groups.values()) earliest = Math.min(earliest, group.head?.deadline ?? Infinity);
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
