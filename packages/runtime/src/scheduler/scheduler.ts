import type { ModelLimits, ModelSchedulerSnapshot } from '@sluice/protocol';
import { systemClock, type Clock } from '../clock.js';
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
import { resolveSchedulerConfig, type SchedulerConfig } from './config.js';
import { DeadlineTimers } from './deadline-timers.js';
import { Job, type JobIdentity, type SlotListener } from './job.js';
import { LinkedQueue } from './linked-queue.js';
import { jsonByteLength } from './request-size.js';

/** Lifecycle notifications, for metrics and for tests that check exactly-once release. */
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
}

/** A call asking for admission. */
export interface AdmissionRequest<O> extends JobIdentity {
  /** The caller's timeout in ms; `undefined` inherits the default (SCH-6). */
  timeout?: number;
  /** A further bound from the task budget's remaining activity time (SCH-19). */
  capMs?: number;
  /** The generation request, counted against `maxRequestBytes`. */
  request: unknown;
  /** Builds the effective options to record, counted as well (SCH-17). */
  options: (timeoutMs: number) => O;
  /** Exact JSON byte length of the options, when the caller can compute it faster than a walk. */
  optionsBytes?: (options: O) => number;
}

/** What an admitted call gets: its job and the effective options that were counted. */
export interface Admission<O> {
  job: Job;
  options: O;
}

/**
 * The one bounded scheduler of a runtime (SPEC SCH-1): execution slots, a FIFO wait queue,
 * in-flight capacity that includes cleanup, a request-size cap and one absolute deadline per
 * call. Admission is synchronous; every structure is bounded by a configured limit.
 */
export class Scheduler {
  readonly limits: Readonly<ModelLimits>;
  private readonly clock: Clock;
  private readonly observer: SchedulerObserver;
  private readonly queue = new LinkedQueue<Job>();
  private readonly jobs = new Map<string, Job>();
  private slotsInUse = 0;
  private preparing = 0;
  private executing = 0;
  private cleaning = 0;
  private accepting = true;
  private drainWaiters: Array<() => void> = [];
  private readonly deadlines: DeadlineTimers<Job>;

  constructor(options: SchedulerOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.limits = Object.freeze(resolveSchedulerConfig(options, this.clock));
    this.observer = options.observer ?? {};
    this.deadlines = new DeadlineTimers<Job>(this.clock, (job) => this.onDeadline(job));
  }

  /** Accepted calls not yet fully cleaned up. */
  get inflight(): number {
    return this.jobs.size;
  }

  /**
   * Admits a call or throws a typed error, without awaiting (SCH-4, SCH-6, SCH-7, SCH-17):
   * effective timeout, then request size, then capacity. An admitted job holds a slot at once
   * or waits in FIFO order.
   */
  admit<O>(request: AdmissionRequest<O>): Admission<O> {
    try {
      if (!this.accepting) throw new RuntimeStoppedError();
      const timeoutMs = this.effectiveTimeout(request.timeout, request.capMs);
      const options = request.options(timeoutMs);
      const limit = this.limits.maxRequestBytes;
      const requestBytes = jsonByteLength(request.request, limit);
      const optionsBytes = request.optionsBytes
        ? request.optionsBytes(options)
        : jsonByteLength(options, limit - requestBytes);
      if (requestBytes > limit || requestBytes + optionsBytes > limit) {
        throw new RequestTooLargeError(limit);
      }
      if (this.jobs.size >= this.limits.maxInflight) {
        throw new OverloadedError('InflightFull', this.limits.maxInflight);
      }
      const slotFree = this.slotsInUse < this.limits.maxConcurrency && this.queue.size === 0;
      if (!slotFree && this.queue.size >= this.limits.maxQueued) {
        throw new OverloadedError('QueueFull', this.limits.maxQueued);
      }
      const job = new Job(request, timeoutMs, this.clock.now());
      if (this.jobs.has(job.callId)) throw new RangeError(`callId "${job.callId}" is already in flight`);
      this.jobs.set(job.callId, job);
      job.timer = this.deadlines.add(job);
      this.observer.admitted?.(job);
      if (slotFree) this.grantSlot(job);
      else job.queueNode = this.queue.enqueue(job);
      return { job, options };
    } catch (error) {
      this.observer.rejected?.(error as ModelRuntimeError);
      throw error;
    }
  }

  /**
   * Tells `listener` when the queued `job` gets its slot, or why it left the queue. A job that
   * already holds its slot, or already left, is answered at once.
   */
  onSlot(job: Job, listener: SlotListener): void {
    if (job.holdsSlot) listener.granted();
    else if (job.phase !== 'Queued') listener.left(job.abortReason ?? new RuntimeStoppedError());
    else job.listener = listener;
  }

  /**
   * Stops `job` for `reason` (first reason wins). A queued job leaves the queue at once and
   * enters Cleaning; a running job's signal aborts its provider.
   */
  abort(job: Job, reason: ModelRuntimeError): void {
    if (job.finished || !job.abort(reason)) return;
    this.clearTimer(job);
    if (job.phase === 'Queued') {
      if (job.queueNode) this.queue.remove(job.queueNode);
      job.queueNode = undefined;
      this.move(job, 'Cleaning');
      const listener = job.listener;
      job.listener = undefined;
      listener?.left(reason);
    }
  }

  /** Preparing → Executing: the request record is confirmed and the provider may start. */
  startExecuting(job: Job): void {
    if (job.phase !== 'Preparing') throw new Error(`job ${job.callId} cannot execute from ${job.phase}`);
    this.move(job, 'Executing');
  }

  /** Gives the slot back once the provider returned (SCH-5); the job keeps its in-flight unit. */
  releaseSlot(job: Job): void {
    if (!job.holdsSlot) return;
    job.holdsSlot = false;
    this.slotsInUse--;
    this.clearTimer(job);
    this.move(job, 'Cleaning');
    this.observer.slotReleased?.(job);
    this.grantNext();
  }

  /** Ends the job after recording and cleanup: its in-flight unit is released, exactly once. */
  finish(job: Job): void {
    if (job.finished) return;
    if (job.holdsSlot) this.releaseSlot(job);
    if (job.phase === 'Queued') this.abort(job, new RuntimeStoppedError());
    job.finished = true;
    this.clearTimer(job);
    this.cleaning--;
    this.jobs.delete(job.callId);
    this.observer.finished?.(job);
    if (this.jobs.size === 0 && this.drainWaiters.length > 0) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /** Stops admission and cancels every queued job with `RuntimeStopped`; running jobs go on. */
  stop(): void {
    this.accepting = false;
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
    for (const job of this.jobs.values()) this.abort(job, reason());
  }

  /** The live state: counts plus every in-flight job, bounded by `maxInflight` (SCH-11, SCH-13). */
  snapshot(): ModelSchedulerSnapshot {
    const now = this.clock.now();
    const jobs = [];
    for (const job of this.jobs.values()) jobs.push(job.report(now));
    return {
      accepting: this.accepting,
      inflight: this.jobs.size,
      queued: this.queue.size,
      preparing: this.preparing,
      executing: this.executing,
      cleaning: this.cleaning,
      limits: this.limits,
      jobs,
    };
  }

  private effectiveTimeout(timeout: number | undefined, capMs: number | undefined): number {
    if (timeout !== undefined && (typeof timeout !== 'number' || Number.isNaN(timeout) || timeout < 0)) {
      throw new InvalidTimeoutError(timeout);
    }
    let effective = Math.min(timeout ?? Infinity, this.limits.defaultTimeoutMs);
    if (capMs !== undefined) effective = Math.min(effective, capMs);
    if (effective === 0) throw new TimeoutError(0, 'admission');
    return effective;
  }

  private onDeadline(job: Job): void {
    job.timer = undefined;
    const phase = job.phase.toLowerCase() as TimeoutPhase;
    this.abort(
      job,
      job.phase === 'Queued' ? new QueueTimeoutError(job.timeoutMs) : new TimeoutError(job.timeoutMs, phase),
    );
  }

  private grantNext(): void {
    while (this.slotsInUse < this.limits.maxConcurrency) {
      const next = this.queue.dequeue();
      if (!next) return;
      next.queueNode = undefined;
      this.grantSlot(next);
    }
  }

  private grantSlot(job: Job): void {
    job.holdsSlot = true;
    this.slotsInUse++;
    this.move(job, 'Preparing');
    this.observer.slotGranted?.(job);
    const listener = job.listener;
    job.listener = undefined;
    listener?.granted();
  }

  private move(job: Job, phase: Job['phase']): void {
    this.adjust(job.phase, -1);
    job.enter(phase, this.clock.now());
    this.adjust(phase, +1);
  }

  private adjust(phase: Job['phase'], delta: number): void {
    if (phase === 'Preparing') this.preparing += delta;
    else if (phase === 'Executing') this.executing += delta;
    else if (phase === 'Cleaning') this.cleaning += delta;
  }

  private clearTimer(job: Job): void {
    if (job.timer === undefined) return;
    this.deadlines.remove(job.timer);
    job.timer = undefined;
  }
}
