import type { ModelJobPhase, ModelJobReport } from '@sluice/protocol';
import type { ModelRuntimeError } from '../errors.js';
import type { CallPhases } from '../journal/records.js';
import type { CapacityClaim } from './capacity-port.js';
import { keepShape } from '../keep-shape.js';
import type { Deadlined, IN_ORDER } from './deadline-timers.js';
import type { LinkedQueue, QueueNode } from './linked-queue.js';
import { jsonByteLength } from './request-size.js';

const noop = (): void => undefined;

/** What only an aborted or streamed job needs: created on first use, off the hot path. */
interface AbortState {
  /** Created on first use of `signal`: an AbortSignal costs microseconds the hot path need not pay. */
  controller: AbortController | undefined;
  racer: ((reason: ModelRuntimeError) => void) | undefined;
}

/**
 * One model call inside the scheduler. The scheduler admits it, moves it through its phases
 * and tells it — through the overridable `granted`, `left` and `aborted` hooks — when it got
 * its slot, left the queue or must stop. The gateway's call extends it, so one object per
 * call carries both the scheduler's and the gateway's state; every field costs each call its
 * bytes and its store, so what can be derived is derived and what is rare lives apart.
 */
export class Job implements Deadlined<Job>, CapacityClaim {
  readonly callId: string;
  readonly taskId: string;
  readonly sessionId: string | undefined;
  readonly kind: 'complete' | 'stream';
  /** The generation request, counted at admission; never shown in a report. */
  readonly request: unknown;
  // NaN means "not yet", never 0: see docs/decisions/012-runtime-hot-path.md
  /** The effective timeout, fixed at admission (SCH-6). */
  timeoutMs = NaN;
  /** Clock time of admission, when the job entered Queued; NaN until admitted. */
  admittedAt = NaN;
  // When the job entered Preparing, Executing and Cleaning, in whole ms after admission; -1 until
  // then (see docs/decisions/012-runtime-hot-path.md). The snapshot reports whole ms anyway.
  private preparingAfter = -1;
  private executingAfter = -1;
  private cleaningAfter = -1;
  phase: ModelJobPhase = 'Queued';
  /** The first reason this job must stop; later reasons are ignored. */
  abortReason: ModelRuntimeError | undefined = undefined;
  requestRecorded = false;
  resultRecorded = false;
  /** Journal appends of this job not yet confirmed or failed. */
  pendingAppends = 0;
  /** @internal set once the job's in-flight unit is released */
  finished = false;
  /**
   * @internal waiting for room in the scheduler (docs/decisions/029): its deadline runs, it
   * holds nothing, and its in-flight links link it into the list of waiters instead
   */
  waiting = false;
  /** @internal neighbours in the scheduler's list of in-flight jobs, which is also its wait queue */
  inflightPrev: Job | undefined = undefined;
  /** @internal */
  inflightNext: Job | undefined = undefined;
  /** @internal how the scheduler's deadline timers watch it, until cleared */
  deadlineGroup: LinkedQueue<Job> | typeof IN_ORDER | undefined = undefined;
  /** @internal links in a deadline group, of which a job with an uncommon timeout is its own node */
  prev: QueueNode<Job> | undefined = undefined;
  /** @internal */
  next: QueueNode<Job> | undefined = undefined;
  /** @internal */
  linked = false;
  private abortState: AbortState | undefined = undefined;

  /**
   * A job for `request` (counted against `maxRequestBytes`, SCH-17), identified by `callId` and
   * its task and session. The arguments are positional: an options object would be one more
   * allocation on every call's path.
   */
  constructor(
    callId: string,
    taskId: string,
    sessionId: string | undefined,
    kind: 'complete' | 'stream',
    request: unknown,
  ) {
    this.callId = callId;
    this.taskId = taskId;
    this.sessionId = sessionId;
    this.kind = kind;
    this.request = request;
  }

  /** @internal the job as the value of its own deadline-group node */
  get value(): Job {
    return this;
  }

  /** The absolute deadline: admission plus the effective timeout; never moves. */
  get deadline(): number {
    return this.admittedAt + this.timeoutMs;
  }

  /** @internal whether the scheduler accepted the job */
  get admitted(): boolean {
    return !Number.isNaN(this.admittedAt);
  }

  /** @internal whether the job holds an execution slot: only while it prepares or executes */
  get holdsSlot(): boolean {
    return this.phase === 'Preparing' || this.phase === 'Executing';
  }

  /** Why the call ended (a model stop reason or an error code); undefined while it runs. */
  get stopReason(): string | undefined {
    return undefined;
  }

  /** Tokens the call used (input plus output), once it ended; a plain job uses none. */
  get usedTokens(): number {
    return 0;
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

  /**
   * Hook: the job, which waited for room (docs/decisions/029), is admitted since `now` — after
   * `granted` when it gets a slot at once.
   */
  entered(now: number): void {
    void now;
  }

  /** Hook: the job waited for room and leaves without being admitted, for `reason`. */
  turnedAway(reason: ModelRuntimeError): void {
    void reason;
  }

  /** Hook: the job was just aborted (deadline, cancellation, shutdown, failed record). */
  protected aborted(reason: ModelRuntimeError): void {
    void reason;
  }

  /** @internal fixes the effective timeout and the admission time */
  accept(timeoutMs: number, now: number): void {
    this.timeoutMs = timeoutMs;
    this.admittedAt = now;
  }

  /** @internal Queued → Preparing: the job holds a slot since `now`. */
  enterPreparing(now: number): void {
    this.phase = 'Preparing';
    this.preparingAfter = Math.round(now - this.admittedAt);
  }

  /** @internal Preparing → Executing: the provider runs since `now`. */
  enterExecuting(now: number): void {
    this.phase = 'Executing';
    this.executingAfter = Math.round(now - this.admittedAt);
  }

  /** @internal Into Cleaning at `now`, from any phase: the slot is released or was never held. */
  enterCleaning(now: number): void {
    this.phase = 'Cleaning';
    this.cleaningAfter = Math.round(now - this.admittedAt);
  }

  /** @internal How long it held its slot, in ms (once in Cleaning after holding one). */
  get slotHeldMs(): number {
    return this.preparingAfter < 0 ? 0 : this.cleaningAfter - this.preparingAfter;
  }

  /**
   * Whole ms the job spent queued, preparing and executing, as of `now` (its end): a phase it
   * skipped took 0 ms. Written into its result record, for run reports (SCH-19).
   */
  phaseTimes(now: number): CallPhases {
    const cleaned = this.cleaningAfter < 0 ? Math.round(now - this.admittedAt) : this.cleaningAfter;
    const executed = this.executingAfter < 0 ? cleaned : this.executingAfter;
    const prepared = this.preparingAfter < 0 ? executed : this.preparingAfter;
    return { queuedMs: prepared, preparingMs: executed - prepared, executingMs: cleaned - executed };
  }

  /** Aborted once, with `abortReason`, on deadline, cancellation, shutdown or a failed request record. */
  get signal(): AbortSignal {
    const state = (this.abortState ??= { controller: undefined, racer: undefined });
    if (!state.controller) {
      state.controller = new AbortController();
      if (this.abortReason) state.controller.abort(this.abortReason);
    }
    return state.controller.signal;
  }

  /** @internal records the first abort reason and aborts `signal`; returns false if already aborted. */
  abort(reason: ModelRuntimeError): boolean {
    if (this.abortReason) return false;
    this.abortReason = reason;
    const state = this.abortState;
    if (state) {
      state.controller?.abort(reason);
      const racer = state.racer;
      state.racer = undefined;
      racer?.(reason);
    }
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
    const state = (this.abortState ??= { controller: undefined, racer: undefined });
    return new Promise<T>((resolve, reject) => {
      state.racer = (reason) => {
        promise.catch(noop);
        reject(reason);
      };
      promise.then(
        (value) => {
          state.racer = undefined;
          resolve(value);
        },
        (error: unknown) => {
          state.racer = undefined;
          reject(error);
        },
      );
    });
  }

  /** The job as the snapshot shows it: no request content (SCH-11). */
  report(now: number): ModelJobReport {
    // Phases only move forward (some may be skipped): each lasted until the next one entered.
    const age = Math.round(now - this.admittedAt);
    const cleaned = this.cleaningAfter < 0 ? age : this.cleaningAfter;
    const executed = this.executingAfter < 0 ? cleaned : this.executingAfter;
    const prepared = this.preparingAfter < 0 ? executed : this.preparingAfter;
    const phaseDurationsMs: Record<ModelJobPhase, number> = {
      Queued: prepared,
      Preparing: executed - prepared,
      Executing: cleaned - executed,
      Cleaning: age - cleaned,
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
    const stopReason = this.stopReason;
    if (stopReason !== undefined) report.stopReason = stopReason;
    return report;
  }
}

// see docs/decisions/012-runtime-hot-path.md
keepShape(new Job('', '', undefined, 'complete', undefined));
