import type { ModelJobPhase, ModelJobReport } from '@sluice/protocol';
import type { ModelRuntimeError } from '../errors.js';
import type { QueueNode } from './linked-queue.js';

/** What a caller states about a call when it asks for admission. */
export interface JobIdentity {
  callId: string;
  taskId: string;
  sessionId?: string;
  kind: 'complete' | 'stream';
}

const noop = (): void => undefined;

/** Who waits for a queued job's slot: told once, either way. */
export interface SlotListener {
  granted(): void;
  left(reason: ModelRuntimeError): void;
}

const PHASES: readonly ModelJobPhase[] = ['Queued', 'Preparing', 'Executing', 'Cleaning'];

/**
 * One accepted model call inside the scheduler. The scheduler moves it through its phases;
 * the gateway reads `signal` and `abortReason` and sets the recording flags.
 */
export class Job {
  readonly callId: string;
  readonly taskId: string;
  readonly sessionId: string | undefined;
  readonly kind: 'complete' | 'stream';
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
  finished = false;
  /** @internal */
  queueNode: QueueNode<Job> | undefined;
  /** @internal its entry in the scheduler's deadline timers, until cleared */
  timer: QueueNode<Job> | undefined;
  /** @internal told when the job gets its slot or leaves the queue */
  listener: SlotListener | undefined;

  /** Created on first use of `signal`: an AbortSignal costs microseconds the hot path need not pay. */
  private controller: AbortController | undefined;
  private racer: ((reason: ModelRuntimeError) => void) | undefined;
  /** @internal called once when the job is aborted while its owner waits on something */
  abortHook: ((reason: ModelRuntimeError) => void) | undefined;
  private queuedMs = 0;
  private preparingMs = 0;
  private executingMs = 0;
  private cleaningMs = 0;
  private phaseStartedAt: number;

  constructor(
    identity: JobIdentity,
    /** The effective timeout fixed at admission (SCH-6). */
    readonly timeoutMs: number,
    readonly admittedAt: number,
  ) {
    this.callId = identity.callId;
    this.taskId = identity.taskId;
    this.sessionId = identity.sessionId;
    this.kind = identity.kind;
    this.phaseStartedAt = admittedAt;
  }

  /** The absolute deadline: admission plus the effective timeout; never moves. */
  get deadline(): number {
    return this.admittedAt + this.timeoutMs;
  }

  /** @internal */
  enter(phase: ModelJobPhase, now: number): void {
    const spent = now - this.phaseStartedAt;
    if (this.phase === 'Queued') this.queuedMs += spent;
    else if (this.phase === 'Preparing') this.preparingMs += spent;
    else if (this.phase === 'Executing') this.executingMs += spent;
    else this.cleaningMs += spent;
    this.phase = phase;
    this.phaseStartedAt = now;
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
    const hook = this.abortHook;
    this.abortHook = undefined;
    hook?.(reason);
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
    const phaseDurationsMs: Record<ModelJobPhase, number> = {
      Queued: this.queuedMs,
      Preparing: this.preparingMs,
      Executing: this.executingMs,
      Cleaning: this.cleaningMs,
    };
    phaseDurationsMs[this.phase] += now - this.phaseStartedAt;
    for (const phase of PHASES) phaseDurationsMs[phase] = Math.round(phaseDurationsMs[phase]);
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
