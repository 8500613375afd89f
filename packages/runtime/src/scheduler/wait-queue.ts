import type { Job } from './job.js';

/**
 * The jobs waiting for a slot, in admission order, kept as a view of the in-flight list rather
 * than a list of their own. A job waits only when it is admitted while others wait or no slot
 * is free, so from the earliest waiting job on, every job admitted later waited too; those
 * that left early (cancelled, timed out) are no longer `Queued` and are passed over once, the
 * next time the front moves. Enqueue, dequeue and early leave are O(1) (amortized for the
 * front), and a waiting job costs no links and no stores into a long-lived list.
 */
export class WaitQueue {
  /** The earliest job that may still wait; undefined when none does. */
  private front: Job | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** `job`, just added to the end of the in-flight list, waits. */
  push(job: Job): void {
    this.count++;
    this.front ??= job;
  }

  /** The earliest waiting job, still in the queue; undefined when none waits. */
  peek(): Job | undefined {
    if (this.count === 0) return undefined;
    let job = this.front;
    while (job !== undefined && job.phase !== 'Queued') job = job.inflightNext;
    this.front = job;
    return job;
  }

  /** Takes the earliest waiting job out of the queue; undefined when none waits. */
  dequeue(): Job | undefined {
    const job = this.peek();
    if (job !== undefined) this.leave();
    return job;
  }

  /** A job leaves the queue, at its turn or early; the caller moves it out of `Queued`. */
  leave(): void {
    if (--this.count === 0) this.front = undefined;
  }

  /** The in-flight list is about to drop `job`. */
  left(job: Job): void {
    if (this.front === job) this.front = job.inflightNext;
  }
}
