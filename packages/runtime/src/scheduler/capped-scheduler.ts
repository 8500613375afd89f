import type { ModelSchedulerSnapshot } from '@sluice/protocol';
import type { Job } from './job.js';
import { Scheduler, type SchedulerOptions } from './scheduler.js';
import type { CapMember, TotalSlotCap } from './total-slot-cap.js';

/** Options of a {@link CappedScheduler}: a scheduler's, plus the cap its slots count against. */
export interface CappedSchedulerOptions extends SchedulerOptions {
  totalSlots: TotalSlotCap;
}

/**
 * The scheduler of one model whose slots also count against a cap shared with other models'
 * (docs/decisions/037). Admission stays synchronous and keeps every bound of its own: a call that
 * finds the cap full is queued — or refused when the queue is full, or waits among the waiters
 * if it may — exactly as if its own slots were full, its deadline running from admission. A
 * subclass, so that a scheduler without a cap runs the same code as before (docs/decisions/025).
 */
export class CappedScheduler extends Scheduler implements CapMember {
  private readonly totalSlots: TotalSlotCap;

  constructor(options: CappedSchedulerOptions) {
    super(options);
    this.totalSlots = options.totalSlots;
    this.totalSlots.join(this);
  }

  /** Gives the slot back to the cap too, which hands it to the earliest call of any model. */
  override releaseSlot(job: Job, now = this.clock.now()): void {
    if (job.holdsSlot) this.totalSlots.give();
    super.releaseSlot(job, now);
  }

  override snapshot(): ModelSchedulerSnapshot {
    const snapshot = super.snapshot();
    snapshot.totalSlots = this.totalSlots.report();
    return snapshot;
  }

  nextInLine(): number | undefined {
    if (!super.hasSlot()) return undefined;
    const head = this.queue.peek();
    if (head !== undefined) return head.admittedAt;
    // A waiter needs an in-flight unit too; one that cannot have it is not in line.
    const waiter = this.waiters.peek();
    if (waiter === undefined || !this.accepting || this.jobs.size >= this.limits.maxInflight)
      return undefined;
    return waiter.admittedAt;
  }

  startNext(now: number): void {
    const head = this.queue.dequeue();
    if (head === undefined) return this.admitWaiters(now); // the longest waiter, with a slot
    this.grantSlot(head, now);
    if (this.waiters.size > 0) this.admitWaiters(now);
  }

  protected override hasSlot(): boolean {
    return super.hasSlot() && this.totalSlots.hasRoom;
  }

  protected override takeSlot(job: Job, now: number): void {
    this.totalSlots.take();
    super.takeSlot(job, now);
  }

  /** A slot freed here may go to another model's call that was admitted earlier. */
  protected override grantNext(now: number): void {
    this.totalSlots.grant(now);
  }
}
