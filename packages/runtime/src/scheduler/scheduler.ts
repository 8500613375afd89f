import type { ModelLimits, ModelSchedulerSnapshot } from '@sluice/protocol';
import { systemClock, type Clock } from '../clock.js';
import { rethrowLater, type ErrorReporter } from '../report-error.js';
import {
  InvalidTimeoutError,
  OverloadedError,
  QueueTimeoutError,
  RequestTooLargeError,
  RuntimeStoppedError,
  TimeoutError,
  type ModelRuntimeError,
  type TimeoutPhase,
} from '../errors.js';
import { CapacityWaiters } from './capacity-waiters.js';
import { resolveMaxWaiting, resolveSchedulerConfig, type SchedulerConfig } from './config.js';
import { DeadlineTimers } from './deadline-timers.js';
import type { Job } from './job.js';
import { InflightList } from './inflight-list.js';
import { WaitQueue } from './wait-queue.js';
import { jsonByteBound, jsonByteLength } from './request-size.js';

/**
 * Lifecycle notifications, for metrics and for tests that check exactly-once release. An
 * observer with no hook when the scheduler is built is never consulted.
 */
export interface SchedulerObserver {
  admitted?(job: Job): void;
  rejected?(error: ModelRuntimeError): void;
  slotGranted?(job: Job): void;
  slotReleased?(job: Job): void;
  finished?(job: Job): void;
}

/** Options of a {@link Scheduler}: its limits plus the clock that drives every deadline. */
export interface SchedulerOptions extends SchedulerConfig {
  clock?: Clock;
  observer?: SchedulerObserver;
  /** Gets what an observer hook throws, once the scheduler's own step is done; default {@link rethrowLater}. */
  reportError?: ErrorReporter;
}

/**
 * The one bounded scheduler of a runtime (SPEC SCH-1): execution slots, a FIFO wait queue,
 * in-flight capacity that includes cleanup, a request-size cap and one absolute deadline per
 * call. Admission is synchronous; every structure is bounded by a configured limit.
 */
export class Scheduler {
  readonly limits: Readonly<ModelLimits>;
  protected readonly clock: Clock;
  /** Undefined when no hook was given: the hot path then skips every notification. */
  private readonly observer: SchedulerObserver | undefined;
  private readonly reportError: ErrorReporter;
  protected readonly queue = new WaitQueue();
  /** Every accepted job not yet finished, in admission order. */
  protected readonly jobs = new InflightList();
  protected slotsInUse = 0;
  protected accepting = true;
  private drainWaiters: Array<() => void> = [];
  protected readonly deadlines: DeadlineTimers<Job>;
  /** Calls that may wait for room and found none, in arrival order (docs/decisions/029). */
  protected readonly waiters: CapacityWaiters;

  constructor(options: SchedulerOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.limits = Object.freeze(resolveSchedulerConfig(options, this.clock));
    this.observer = hasHook(options.observer) ? options.observer : undefined;
    this.reportError = options.reportError ?? rethrowLater;
    // Most calls have the default timeout; theirs are watched through the in-flight list, which
    // holds every job in admission order already.
    this.deadlines = new DeadlineTimers<Job>(this.clock, (job) => this.onDeadline(job), {
      timeoutMs: this.limits.defaultTimeoutMs,
      next: (job) => job.inflightNext,
    });
    this.waiters = new CapacityWaiters(
      resolveMaxWaiting(options),
      this.clock,
      this.limits.defaultTimeoutMs,
      (job) => this.abort(job, new QueueTimeoutError(job.timeoutMs)),
    );
  }

  /** Accepted calls not yet fully cleaned up. */
  get inflight(): number {
    return this.jobs.size;
  }

  /**
   * Admits `job` or throws a typed error, without awaiting (SCH-4, SCH-6, SCH-7, SCH-17):
   * effective timeout — the caller's `timeout` (undefined inherits the default) bounded by the
   * task budget's `capMs` — then request size, then capacity. An admitted job holds a slot at
   * once (its `granted` hook runs before this returns) or waits in FIFO order (SCH-12). `now`
   * is the clock's time, for a caller that just read it.
   *
   * A job that `mayWait` — a call for an accepted prompt — and finds no room waits among the
   * scheduler's bounded waiters instead of being refused, its deadline running from `now`; it
   * is admitted in arrival order as room frees, and then told `entered` (docs/decisions/029).
   * Returns false when the job waits.
   */
  admit(job: Job, timeout?: number, capMs?: number, now = this.clock.now(), mayWait = false): boolean {
    let timeoutMs = NaN;
    let slotFree: boolean;
    try {
      if (!this.accepting) throw new RuntimeStoppedError();
      if (job.admitted) throw new RangeError(`job ${job.callId} was already admitted`);
      timeoutMs = this.effectiveTimeout(timeout, capMs);
      const limits = this.limits;
      if (!this.fitsRequestLimit(job, timeoutMs)) throw new RequestTooLargeError(limits.maxRequestBytes);
      if (this.jobs.size >= limits.maxInflight)
        throw new OverloadedError('InflightFull', limits.maxInflight, this.retryAfterMs(this.jobs.size));
      const queued = this.queue.size;
      slotFree = queued === 0 && this.hasSlot();
      if (!slotFree && queued >= limits.maxQueued)
        throw new OverloadedError('QueueFull', limits.maxQueued, this.retryAfterMs(queued + this.slotsInUse));
    } catch (error) {
      if (mayWait && error instanceof OverloadedError && !this.waiters.full) {
        job.accept(timeoutMs, now);
        this.waiters.push(job);
        return false;
      }
      this.notify('rejected', error as ModelRuntimeError);
      throw error;
    }
    job.accept(timeoutMs, now);
    this.enter(job, slotFree, now);
    return true;
  }

  /** `job`, accepted, enters the in-flight list holding a slot (`slotFree`) or queued, at `now`. */
  protected enter(job: Job, slotFree: boolean, now: number): void {
    this.jobs.add(job);
    this.deadlines.add(job);
    // The job is counted where it is (holding a slot, or waiting) before any hook can look at
    // the snapshot; `admitted` is still told before `slotGranted`.
    if (slotFree) this.takeSlot(job, now);
    else this.queue.push(job);
    this.notify('admitted', job);
    if (slotFree) this.slotTaken(job, now);
  }

  /**
   * Stops `job` for `reason` (first reason wins). A queued job leaves the queue at once and
   * enters Cleaning; a running job's signal aborts its provider; a waiter is turned away. A
   * job this scheduler never admitted, or one already finished, is left alone.
   */
  abort(job: Job, reason: ModelRuntimeError): void {
    if (job.finished || !job.admitted || !job.abort(reason)) return;
    if (job.waiting) return this.turnAway(job, reason);
    this.deadlines.remove(job);
    if (job.phase === 'Queued') {
      this.queue.leave();
      job.enterCleaning(this.clock.now());
      job.left(reason);
      if (this.waiters.size > 0) this.admitWaiters(this.clock.now());
    }
  }

  /** Preparing → Executing at `now`: the request record is confirmed and the provider may start. */
  startExecuting(job: Job, now = this.clock.now()): void {
    if (job.phase !== 'Preparing') throw new Error(`job ${job.callId} cannot execute from ${job.phase}`);
    job.enterExecuting(now);
  }

  /** Calls that hold a slot usually hold it this long (ms, smoothed); 0 before the first. */
  private slotHoldMs = 0;

  /**
   * When a refused caller may find room: the `ahead` calls drain through the slots at the
   * recent pace, rounded up to whole seconds, between 1 s and 5 minutes.
   */
  private retryAfterMs(ahead: number): number {
    const rounds = Math.ceil((ahead + 1) / this.limits.maxConcurrency);
    const estimate = Math.ceil((rounds * this.slotHoldMs) / 1_000) * 1_000;
    return Math.min(300_000, Math.max(1_000, estimate));
  }

  /**
   * Gives the slot back once the provider returned (SCH-5); the job keeps its in-flight unit.
   * The next queued job gets the slot at the same `now`.
   */
  releaseSlot(job: Job, now = this.clock.now()): void {
    if (!job.holdsSlot) return;
    this.slotsInUse--;
    this.deadlines.remove(job);
    job.enterCleaning(now);
    // How long calls hold a slot, smoothed over about the last eight (for Retry-After).
    const held = job.slotHeldMs;
    this.slotHoldMs = this.slotHoldMs === 0 ? held : this.slotHoldMs + (held - this.slotHoldMs) / 8;
    this.notify('slotReleased', job);
    this.grantNext(now);
    if (this.waiters.size > 0) this.admitWaiters(now);
  }

  /** Ends the job after recording and cleanup: its in-flight unit is released, exactly once. */
  finish(job: Job): void {
    if (job.finished || !job.admitted) return;
    if (job.waiting) return this.abort(job, new RuntimeStoppedError());
    if (job.holdsSlot) this.releaseSlot(job);
    else if (job.phase === 'Queued') this.abort(job, new RuntimeStoppedError());
    job.finished = true; // its deadline went when it entered Cleaning
    this.deadlines.left(job);
    this.queue.left(job);
    this.jobs.remove(job);
    this.notify('finished', job);
    // The clock is read only when someone waits: a call's path reads it twice (decision 001).
    if (this.waiters.size > 0) this.admitWaiters(this.clock.now());
    if (this.drainWaiters.length > 0 && this.jobs.size === 0) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /** Stops admission and cancels every waiting and queued job with `RuntimeStopped`; running jobs go on. */
  stop(): void {
    this.accepting = false;
    for (let job = this.waiters.peek(); job; job = this.waiters.peek())
      this.abort(job, new RuntimeStoppedError());
    for (let job = this.queue.peek(); job; job = this.queue.peek())
      this.abort(job, new RuntimeStoppedError());
  }

  /** Resolves when no accepted job is left (all recorded and cleaned up). */
  drained(): Promise<void> {
    if (this.jobs.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Aborts every accepted job that is still running; used by a forced shutdown. */
  abortAll(reason: () => ModelRuntimeError): void {
    for (const job of this.jobs.toArray()) this.abort(job, reason());
  }

  /**
   * The live state: counts plus every in-flight job, bounded by `maxInflight` (SCH-11, SCH-13).
   * The per-phase counts are taken from the jobs here rather than kept on every transition.
   */
  snapshot(): ModelSchedulerSnapshot {
    const now = this.clock.now();
    const jobs = this.jobs.toArray().map((job) => job.report(now));
    let preparing = 0;
    let executing = 0;
    let cleaning = 0;
    for (const job of jobs) {
      if (job.phase === 'Preparing') preparing++;
      else if (job.phase === 'Executing') executing++;
      else if (job.phase === 'Cleaning') cleaning++;
    }
    return {
      accepting: this.accepting,
      inflight: this.jobs.size,
      queued: this.queue.size,
      waiting: this.waiters.size,
      maxWaiting: this.waiters.limit,
      preparing,
      executing,
      cleaning,
      limits: this.limits,
      jobs,
    };
  }

  protected effectiveTimeout(timeout: number | undefined, capMs: number | undefined): number {
    if (timeout !== undefined && (typeof timeout !== 'number' || Number.isNaN(timeout) || timeout < 0)) {
      throw new InvalidTimeoutError(timeout);
    }
    let effective = Math.min(timeout ?? Infinity, this.limits.defaultTimeoutMs);
    if (capMs !== undefined) effective = Math.min(effective, capMs);
    if (effective === 0) throw new TimeoutError(0, 'admission');
    return effective;
  }

  /**
   * Whether the request and the options it would record with `timeoutMs` fit `maxRequestBytes`
   * together (SCH-17). A bound that reads no characters decides almost every call; only a
   * request near the limit is counted exactly — the decision is the exact count's either way.
   */
  protected fitsRequestLimit(job: Job, timeoutMs: number): boolean {
    const limit = this.limits.maxRequestBytes;
    const room = limit - job.optionsBytes(timeoutMs, limit);
    if (room < 0) return false;
    return jsonByteBound(job.request, room) <= room || jsonByteLength(job.request, room) <= room;
  }

  private onDeadline(job: Job): void {
    const phase = job.phase.toLowerCase() as TimeoutPhase;
    this.abort(
      job,
      job.phase === 'Queued' ? new QueueTimeoutError(job.timeoutMs) : new TimeoutError(job.timeoutMs, phase),
    );
  }

  /**
   * Admits waiters, longest-waiting first, while there is room for them — called wherever room
   * frees (a slot, a queue place, an in-flight unit), so none stays idle while a call waits.
   * A waiter whose deadline passed meanwhile is turned away instead.
   */
  protected admitWaiters(now: number): void {
    for (let job = this.waiters.peek(); job !== undefined && this.hasRoom(); job = this.waiters.peek()) {
      if (job.deadline <= now) {
        this.abort(job, new QueueTimeoutError(job.timeoutMs));
        continue;
      }
      this.waiters.remove(job);
      // As with `admit`: the slot is told first, the request record starts after.
      this.enter(job, this.queue.size === 0 && this.hasSlot(), now);
      job.entered(now);
    }
  }

  /** Whether a job admitted now would hold a slot or a queue place, within the in-flight cap. */
  private hasRoom(): boolean {
    const limits = this.limits;
    if (!this.accepting || this.jobs.size >= limits.maxInflight) return false;
    const queued = this.queue.size;
    return queued < limits.maxQueued || (queued === 0 && this.hasSlot());
  }

  /** `job` leaves the waiters without being admitted, for `reason`. */
  protected turnAway(job: Job, reason: ModelRuntimeError): void {
    this.waiters.remove(job);
    job.finished = true;
    this.notify('rejected', reason);
    job.turnedAway(reason);
  }

  /**
   * Whether a job could hold a slot now, queue aside: this scheduler's slots, and those of a
   * cap shared with other schedulers (a `CappedScheduler`).
   */
  protected hasSlot(): boolean {
    return this.slotsInUse < this.limits.maxConcurrency;
  }

  protected grantNext(now: number): void {
    while (this.hasSlot()) {
      const next = this.queue.dequeue();
      if (!next) return;
      this.grantSlot(next, now);
    }
  }

  protected grantSlot(job: Job, now: number): void {
    this.takeSlot(job, now);
    this.slotTaken(job, now);
  }

  protected takeSlot(job: Job, now: number): void {
    this.slotsInUse++;
    job.enterPreparing(now);
  }

  protected slotTaken(job: Job, now: number): void {
    this.notify('slotGranted', job);
    job.granted(now);
  }

  /**
   * Runs an observer hook; what it throws is reported and never stops the step it observes.
   * A scheduler without an observer returns at once.
   */
  protected notify<K extends keyof SchedulerObserver>(
    hook: K,
    subject: Parameters<NonNullable<SchedulerObserver[K]>>[0],
  ): void {
    const observer = this.observer;
    if (observer === undefined) return;
    const fn = observer[hook] as ((subject: unknown) => void) | undefined;
    if (fn === undefined) return;
    try {
      fn.call(observer, subject);
    } catch (error) {
      this.reportError(error);
    }
  }
}

const HOOKS = ['admitted', 'rejected', 'slotGranted', 'slotReleased', 'finished'] as const;

/** Whether `observer` has any hook; one without is never consulted. */
function hasHook(observer: SchedulerObserver | undefined): observer is SchedulerObserver {
  return observer !== undefined && HOOKS.some((hook) => observer[hook] !== undefined);
}
