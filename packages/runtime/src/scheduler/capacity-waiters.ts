import type { Clock } from '../clock.js';
import { DeadlineTimers } from './deadline-timers.js';
import { InflightList } from './inflight-list.js';
import type { Job } from './job.js';

/**
 * Calls of accepted prompts that found the scheduler full, waiting in arrival order for room in
 * it (docs/decisions/029). A waiter holds no slot, queue place or in-flight unit; its deadline
 * runs from its arrival, and it leaves at its turn, on its deadline, or when cancelled — each
 * in O(1). It is linked through the job's in-flight links, which it does not use while it
 * waits, so waiting costs no node; the list is bounded by `limit`.
 */
export class CapacityWaiters {
  /** The waiters in arrival order, linked as the in-flight jobs are. */
  private readonly list = new InflightList();
  private readonly deadlines: DeadlineTimers<Job>;

  constructor(
    /** Waiters at most; a call that finds the list full is refused as if it could not wait. */
    readonly limit: number,
    clock: Clock,
    defaultTimeoutMs: number,
    expire: (job: Job) => void,
  ) {
    // Arrival only grows, so the waiters with the default timeout have their deadlines in order.
    this.deadlines = new DeadlineTimers<Job>(clock, expire, {
      timeoutMs: defaultTimeoutMs,
      next: (job) => job.inflightNext,
    });
  }

  get size(): number {
    return this.list.size;
  }

  /** Whether another waiter would exceed {@link limit}. */
  get full(): boolean {
    return this.list.size >= this.limit;
  }

  /** The longest-waiting job; undefined when none waits. */
  peek(): Job | undefined {
    return this.list.first;
  }

  /** `job`, accepted with its deadline, waits at the end of the list. */
  push(job: Job): void {
    this.list.add(job);
    job.waiting = true;
    this.deadlines.add(job);
  }

  /** Takes `job`, which waits here, out of the list: at its turn or early. */
  remove(job: Job): void {
    this.deadlines.left(job);
    this.deadlines.remove(job);
    this.list.remove(job);
    job.waiting = false;
  }
}
