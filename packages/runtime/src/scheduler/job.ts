import type { ModelJobPhase, ModelJobReport } from '@sluice/protocol';
import type { ModelRuntimeError } from '../errors.js';
import type { QueueNode } from './linked-queue.js';
import { jsonByteLength } from './request-size.js';

/** What a caller states about a call when it asks for admission. */
export interface JobIdentity {
  callId: string;
  taskId: string;
  sessionId?: string;
  kind: 'complete' | 'stream';
}

/** What a job asks of the scheduler: its timeout, its size and an optional cap. */
export interface JobRequest extends JobIdentity {
  /** The generation request, counted against `maxRequestBytes` (SCH-17). */
  request: unknown;
  /** The caller's timeout in ms; `undefined` inherits the default (SCH-6). */
  timeout?: number;
  /** A further bound, from the task budget's remaining activity time (SCH-19). */
  capMs?: number;
}

const noop = (): void => undefined;

/**
 * One model call inside the scheduler. The scheduler admits it, moves it through its phases
 * and tells it — through the overridable `granted`, `left` and `aborted` hooks — when it got
 * its slot, left the queue or must stop. The gateway's call extends it, so one object per
 * call carries both the scheduler's and the gateway's state.
 */
export class Job implements QueueNode<Job> {
  readonly callId: string;
  readonly taskId: string;
  readonly sessionId: string | undefined;
  readonly kind: 'complete' | 'stream';
  /** The generation request, counted at admission; never shown in a report. */
  readonly request: unknown;
  /** @internal the caller's timeout before admission resolved it */
  readonly requestedTimeout: number | undefined;
  /** @internal the budget's bound on the timeout */
  readonly capMs: number | undefined;
  // Times and the timeout start as NaN ("not yet"), never 0: NaN is a double, so these fields are
  // doubles from the first object on. A field that starts as a small integer and later holds a
  // fraction makes V8 change the layout of every job already built — with a deep queue, one slow
  // migration per queued job as the first of them runs.
  /** The effective timeout, fixed at admission (SCH-6). */
  timeoutMs = NaN;
  /** Clock time of admission, when the job entered Queued. */
  admittedAt = NaN;
  phase: ModelJobPhase = 'Queued';
  /** The first reason this job must stop; later reasons are ignored. */
  abortReason: ModelRuntimeError | undefined;
  requestRecorded = false;
  resultRecorded = false;
  /** Journal appends of this job not yet confirmed or failed. */
  pendingAppends = 0;
  stopReason: string | undefined;

  /** @internal scheduler bookkeeping */
  holdsSlot = false;
  /** @internal */
  admitted = false;
  /** @internal */
  finished = false;
  /** @internal links in the scheduler's wait queue, of which a queued job is its own node */
  prev: QueueNode<Job> | undefined;
  /** @internal */
  next: QueueNode<Job> | undefined;
  /** @internal whether the job is in the wait queue */
  linked = false;
  /** @internal neighbours in the scheduler's list of in-flight jobs */
  inflightPrev: Job | undefined;
  /** @internal */
  inflightNext: Job | undefined;
  /** @internal its entry in the scheduler's deadline timers, until cleared */
  timer: QueueNode<Job> | undefined;

  /** Created on first use of `signal`: an AbortSignal costs microseconds the hot path need not pay. */
  private controller: AbortController | undefined;
  private racer: ((reason: ModelRuntimeError) => void) | undefined;
  /** Clock times at which the job entered Preparing, Executing and Cleaning; NaN until then. */
  private preparingAt = NaN;
  private executingAt = NaN;
  private cleaningAt = NaN;

  constructor(request: JobRequest) {
    this.callId = request.callId;
    this.taskId = request.taskId;
    this.sessionId = request.sessionId;
    this.kind = request.kind;
    this.request = request.request;
    this.requestedTimeout = request.timeout;
    this.capMs = request.capMs;
  }

  /** @internal the job as the value of its own wait-queue node */
  get value(): Job {
    return this;
  }

  /** The absolute deadline: admission plus the effective timeout; never moves. */
  get deadline(): number {
    return this.admittedAt + this.timeoutMs;
  }

  /**
   * JSON bytes of the effective options this call would record with `timeoutMs`, counted with
   * the request against `maxRequestBytes` (SCH-17). A plain job has none; the gateway's call
   * counts its own by arithmetic.
   */
  optionsBytes(timeoutMs: number, limit: number): number {
    return jsonByteLength({ timeoutMs }, limit);
  }

  /** Hook: the job holds an execution slot since `now` (at admission or later, in FIFO order). */
  granted(now: number): void {
    void now;
  }

  /** Hook: the job left the queue without a slot, for `reason`. */
  left(reason: ModelRuntimeError): void {
    void reason;
  }

  /** Hook: the job was just aborted (deadline, cancellation, shutdown, failed record). */
  protected aborted(reason: ModelRuntimeError): void {
    void reason;
  }

  /** @internal fixes the effective timeout and the admission time */
  accept(timeoutMs: number, now: number): void {
    this.admitted = true;
    this.timeoutMs = timeoutMs;
    this.admittedAt = now;
  }

  /** @internal */
  enter(phase: ModelJobPhase, now: number): void {
    this.phase = phase;
    if (phase === 'Preparing') this.preparingAt = now;
    else if (phase === 'Executing') this.executingAt = now;
    else if (phase === 'Cleaning') this.cleaningAt = now;
  }

  /** Aborted once, with `abortReason`, on deadline, cancellation, shutdown or a failed request record. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortReason) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  /** @internal records the first abort reason and aborts `signal`; returns false if already aborted. */
  abort(reason: ModelRuntimeError): boolean {
    if (this.abortReason) return false;
    this.abortReason = reason;
    this.controller?.abort(reason);
    const racer = this.racer;
    this.racer = undefined;
    racer?.(reason);
    this.aborted(reason);
    return true;
  }

  /**
   * Follows `promise` but rejects with the abort reason as soon as the job is aborted — so a
   * provider that ignores its signal cannot hold a slot past the deadline (SCH-8). One race at
   * a time; a promise left behind has its rejection handled.
   */
  race<T>(promise: Promise<T>): Promise<T> {
    if (this.abortReason) {
      promise.catch(noop);
      return Promise.reject(this.abortReason);
    }
    return new Promise<T>((resolve, reject) => {
      this.racer = (reason) => {
        promise.catch(noop);
        reject(reason);
      };
      promise.then(
        (value) => {
          this.racer = undefined;
          resolve(value);
        },
        (error: unknown) => {
          this.racer = undefined;
          reject(error);
        },
      );
    });
  }

  /** The job as the snapshot shows it: no request content (SCH-11). */
  report(now: number): ModelJobReport {
    // Phases only move forward (some may be skipped): each lasted until the next one entered.
    const { admittedAt, preparingAt, executingAt, cleaningAt } = this;
    const cleaned = Number.isNaN(cleaningAt) ? now : cleaningAt;
    const executed = Number.isNaN(executingAt) ? cleaned : executingAt;
    const prepared = Number.isNaN(preparingAt) ? executed : preparingAt;
    const phaseDurationsMs: Record<ModelJobPhase, number> = {
      Queued: Math.round(prepared - admittedAt),
      Preparing: Math.round(executed - prepared),
      Executing: Math.round(cleaned - executed),
      Cleaning: Math.round(now - cleaned),
    };
    const report: ModelJobReport = {
      callId: this.callId,
      taskId: this.taskId,
      kind: this.kind,
      phase: this.phase,
      timeoutMs: this.timeoutMs,
      remainingMs: Math.max(0, Math.round(this.deadline - now)),
      phaseDurationsMs,
      recording: this.pendingAppends > 0,
      requestRecorded: this.requestRecorded,
      resultRecorded: this.resultRecorded,
    };
    if (this.sessionId !== undefined) report.sessionId = this.sessionId;
    if (this.stopReason !== undefined) report.stopReason = this.stopReason;
    return report;
  }
}
