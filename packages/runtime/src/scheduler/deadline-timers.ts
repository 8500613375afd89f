import type { Clock, TimerHandle } from '../clock.js';
import { LinkedQueue, type QueueNode } from './linked-queue.js';

/** Something with a fixed absolute deadline, kept by {@link DeadlineTimers}. */
export interface Deadlined {
  readonly timeoutMs: number;
  readonly deadline: number;
}

/**
 * Enforces many absolute deadlines with one clock timer. Entries are grouped by timeout:
 * within a group deadlines arrive in order (admission time only grows), so add, remove and
 * expiry are O(1) per entry and the timer is re-armed only when an earlier deadline appears.
 */
export class DeadlineTimers<T extends Deadlined> {
  private readonly groups = new Map<number, LinkedQueue<T>>();
  private timer: TimerHandle | undefined;
  private armedAt = Infinity;

  constructor(
    private readonly clock: Clock,
    private readonly expire: (entry: T) => void,
  ) {}

  /** Starts watching `entry`; returns the handle for {@link remove}. */
  add(entry: T): QueueNode<T> {
    let group = this.groups.get(entry.timeoutMs);
    if (!group) {
      group = new LinkedQueue<T>();
      this.groups.set(entry.timeoutMs, group);
    }
    const node = group.enqueue(entry);
    if (entry.deadline < this.armedAt) this.arm(entry.deadline);
    return node;
  }

  /** Stops watching; the timer goes away with the last entry. */
  remove(node: QueueNode<T>): void {
    const group = this.groups.get(node.value.timeoutMs);
    if (!group || !group.remove(node)) return;
    if (group.size === 0) this.groups.delete(node.value.timeoutMs);
    if (this.groups.size === 0) this.disarm();
  }

  private fire(): void {
    this.timer = undefined;
    this.armedAt = Infinity;
    const now = this.clock.now();
    for (const [timeoutMs, group] of this.groups) {
      for (let head = group.peek(); head && head.deadline <= now; head = group.peek()) {
        group.dequeue();
        this.expire(head);
      }
      if (group.size === 0) this.groups.delete(timeoutMs);
    }
    let earliest = Infinity;
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
