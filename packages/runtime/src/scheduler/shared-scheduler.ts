import type { ModelSchedulerSnapshot } from '@sluice/protocol';
import type { TimerHandle } from '../clock.js';
import {
  OverloadedError,
  QueueTimeoutError,
  RequestTooLargeError,
  RuntimeStoppedError,
  type ModelRuntimeError,
} from '../errors.js';
import type { CapacityPort } from './capacity-port.js';
import type { Job } from './job.js';
import { Scheduler, type SchedulerOptions } from './scheduler.js';

/** Options of a {@link SharedScheduler}: a scheduler's, plus where its capacity is held. */
export interface SharedSchedulerOptions extends SchedulerOptions {
  capacity: CapacityPort<Job>;
}

/**
 * The scheduler with its slots, queue places and in-flight units held by a {@link CapacityPort}
 * — shared by a fleet — instead of its own counters. Jobs are admitted with
 * {@link admitShared}; phases, deadlines, aborts and the snapshot are the scheduler's. A
 * subclass rather than a branch in {@link Scheduler}, so that the in-process scheduler's hot path
 * is the same code with or without fleets (docs/decisions/012, 019).
 */
export class SharedScheduler extends Scheduler {
  private readonly capacity: CapacityPort<Job>;
  /** Admissions waiting for the port's answer; `drained` waits for them too. */
  private admitting = 0;
  private admittingWaiters: Array<() => void> = [];
  /** The pool each waiter asks in. */
  private readonly waiterPools = new Map<Job, string>();
  /** Whether the longest waiter's request to the fleet is out. */
  private retrying = false;
  private retryTimer: TimerHandle | undefined;

  constructor(options: SharedSchedulerOptions) {
    super(options);
    this.capacity = options.capacity;
    this.capacity.bind(
      {
        granted: (job) => this.grantShared(job),
        lost: (job, reason) => this.abort(job, reason),
      },
      this.limits,
    );
  }

  /** Use {@link admitShared}: the fleet decides, not this process. */
  override admit(): never {
    throw new Error('a SharedScheduler admits through admitShared');
  }

  /**
   * Admits `job` in `pool` (provider/model) through the port: the checks of `admit` that need no
   * shared state run before the first await and throw synchronously; then one round trip grants
   * a slot, queues the job in the fleet's FIFO order (SCH-12), or rejects with `OverloadedError`
   * holding nothing. The job is admitted — and its deadline starts — when the answer is applied,
   * so admissions enter the in-flight list in the order of their deadlines.
   *
   * A job that `mayWait` and is refused for capacity waits among this node's waiters instead
   * (the promise then resolves false; `entered` or `turnedAway` follow): the longest waiter asks
   * the fleet again when this node gives capacity back, or after the refusal's Retry-After —
   * other nodes' releases are not seen here (docs/decisions/029).
   */
  admitShared(job: Job, pool: string, timeout?: number, capMs?: number, mayWait = false): Promise<boolean> {
    let timeoutMs: number;
    const arrivedAt = this.clock.now();
    try {
      if (!this.accepting) throw new RuntimeStoppedError();
      timeoutMs = this.effectiveTimeout(timeout, capMs);
      if (!this.fitsRequestLimit(job, timeoutMs)) throw new RequestTooLargeError(this.limits.maxRequestBytes);
      if (job.admitted) throw new RangeError(`job ${job.callId} was already admitted`);
    } catch (error) {
      this.notify('rejected', error as ModelRuntimeError);
      throw error;
    }
    this.admitting++;
    return this.capacity.acquire(job, pool).then(
      (granted) => {
        this.admissionSettled();
        this.applyAdmission(job, timeoutMs, granted);
        return true;
      },
      (error: unknown) => {
        this.admissionSettled();
        if (mayWait && error instanceof OverloadedError && this.accepting && !this.waiters.full) {
          job.accept(timeoutMs, arrivedAt);
          this.waiters.push(job);
          this.waiterPools.set(job, pool);
          this.retryLater(error.retryAfterMs);
          return false;
        }
        this.notify('rejected', error as ModelRuntimeError);
        throw error;
      },
    );
  }

  /** A queued job gives back its fleet queue place when it leaves the queue early. */
  override abort(job: Job, reason: ModelRuntimeError): void {
    const leavesQueue =
      job.phase === 'Queued' && job.admitted && !job.waiting && !job.finished && !job.abortReason;
    if (leavesQueue) this.capacity.leave(job);
    super.abort(job, reason);
  }

  /** The slot goes back to the fleet, which hands it to the head of its queue. */
  override releaseSlot(job: Job, now?: number): void {
    const held = job.holdsSlot;
    super.releaseSlot(job, now);
    if (held) this.capacity.leave(job);
  }

  override finish(job: Job): void {
    const held = job.admitted && !job.finished;
    super.finish(job);
    if (held) this.capacity.release(job);
  }

  override async drained(): Promise<void> {
    for (;;) {
      await super.drained();
      if (this.admitting === 0) return;
      await new Promise<void>((resolve) => this.admittingWaiters.push(resolve));
    }
  }

  override snapshot(): ModelSchedulerSnapshot {
    const snapshot = super.snapshot();
    snapshot.fleet = this.capacity.report();
    return snapshot;
  }

  /** Lets go of the port; after {@link drained}. */
  closeCapacity(): Promise<void> {
    return this.capacity.close();
  }

  override stop(): void {
    this.clearRetry();
    super.stop();
  }

  /** Slots are granted by the fleet, never locally. */
  protected override grantNext(): void {}

  /**
   * This node gave capacity back: its longest waiter asks the fleet for room — once the `leave`
   * or `release` that follows this step is sent, so that the fleet sees the room first.
   */
  protected override admitWaiters(): void {
    if (this.waiters.size > 0) queueMicrotask(() => this.retryHead());
  }

  protected override turnAway(job: Job, reason: ModelRuntimeError): void {
    this.waiterPools.delete(job);
    super.turnAway(job, reason);
  }

  /** Asks again for the longest waiter after `ms`, unless something frees sooner. */
  private retryLater(ms: number): void {
    if (this.retrying || this.retryTimer !== undefined) return;
    this.retryTimer = this.clock.setTimer(() => {
      this.retryTimer = undefined;
      this.retryHead();
    }, ms);
  }

  private clearRetry(): void {
    if (this.retryTimer !== undefined) this.clock.clearTimer(this.retryTimer);
    this.retryTimer = undefined;
  }

  /** One request at a time, for the longest waiter: this node's waiters keep their order. */
  private retryHead(): void {
    const job = this.waiters.peek();
    if (job === undefined || this.retrying || !this.accepting) return;
    this.clearRetry();
    this.retrying = true;
    this.admitting++;
    this.capacity.acquire(job, this.waiterPools.get(job)!).then(
      (granted) => {
        this.retried();
        const now = this.clock.now();
        if (!job.waiting || job.deadline <= now) {
          // Turned away meanwhile, or its deadline passed on the way: the room goes back.
          this.capacity.release(job);
          this.abort(job, new QueueTimeoutError(job.timeoutMs));
        } else {
          this.waiters.remove(job);
          this.waiterPools.delete(job);
          // Admitted with what is left of the deadline fixed at its arrival.
          this.applyAdmission(job, job.deadline - now, granted);
          job.entered(now);
        }
        this.retryHead(); // the next waiter may find room too
      },
      (error: unknown) => {
        this.retried();
        if (!job.waiting) return this.retryHead();
        if (error instanceof OverloadedError) this.retryLater(error.retryAfterMs);
        else this.abort(job, error as ModelRuntimeError);
      },
    );
  }

  private retried(): void {
    this.retrying = false;
    this.admissionSettled();
  }

  private applyAdmission(job: Job, timeoutMs: number, granted: boolean): void {
    if (!this.accepting) {
      this.capacity.release(job);
      throw new RuntimeStoppedError();
    }
    const now = this.clock.now();
    job.accept(timeoutMs, now);
    this.enter(job, granted, now);
  }

  /**
   * The port granted a queued job its slot. A job that left the queue meanwhile is passed
   * over: the `leave` it sent gives the slot back, whichever of the two the fleet saw first.
   */
  private grantShared(job: Job): void {
    if (job.phase !== 'Queued' || !job.admitted) return;
    this.queue.leave();
    this.grantSlot(job, this.clock.now());
  }

  private admissionSettled(): void {
    if (--this.admitting > 0) return;
    const waiters = this.admittingWaiters;
    this.admittingWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
