import type { ModelJobPhase, ModelJobReport } from '@sluice/protocol';
import type { TimerHandle } from '../clock.js';
import type { ModelRuntimeError } from '../errors.js';
import type { QueueNode } from './linked-queue.js';

/** What a caller states about a call when it asks for admission. */
export interface JobIdentity {
  callId: string;
  taskId: string;
  sessionId?: string;
  kind: 'complete' | 'stream';
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
  /** Aborted once, with `abortReason`, on deadline, cancellation, shutdown or a failed request record. */
  readonly signal: AbortSignal;
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
  /** @internal */
  timer: TimerHandle | undefined;
  /** @internal resolves or rejects the wait for a slot */
  slotWaiter: { resolve: () => void; reject: (error: ModelRuntimeError) => void } | undefined;

  private readonly controller = new AbortController();
  private readonly durations: Record<ModelJobPhase, number> = { Queued: 0, Preparing: 0, Executing: 0, Cleaning: 0 };
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
    this.signal = this.controller.signal;
    this.phaseStartedAt = admittedAt;
  }

  /** The absolute deadline: admission plus the effective timeout; never moves. */
  get deadline(): number {
    return this.admittedAt + this.timeoutMs;
  }

  /** @internal */
  enter(phase: ModelJobPhase, now: number): void {
    this.durations[this.phase] += now - this.phaseStartedAt;
    this.phase = phase;
    this.phaseStartedAt = now;
  }

  /** @internal records the first abort reason and aborts `signal`; returns false if already aborted. */
  abort(reason: ModelRuntimeError): boolean {
    if (this.abortReason) return false;
    this.abortReason = reason;
    this.controller.abort(reason);
    return true;
  }

  /** The job as the snapshot shows it: no request content (SCH-11). */
  report(now: number): ModelJobReport {
    const phaseDurationsMs = { ...this.durations };
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
