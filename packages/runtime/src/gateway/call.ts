import type { ModelStopReason } from '@sluice/protocol';
import type { TaskBudget } from '../budget/task-budget.js';
import type { ModelRuntimeError, RecordingEvidence } from '../errors.js';
import type { Job, SlotListener } from '../scheduler/job.js';
import type { GenerationRequest, ProviderCallOptions, Usage } from '../types.js';

/** What a provider produced for one call. */
export interface Outcome {
  text: string;
  stopReason: ModelStopReason;
  usage: Usage;
}

/** The steps of one admitted call that the gateway drives; see `ModelRuntime`. */
export interface CallDriver {
  run(call: Call): void;
  endExecution(call: Call, outcome: Outcome | undefined, failure: ModelRuntimeError): void;
}

/**
 * One admitted call: its job, budget and request append, what runs it and who receives the
 * result. It is also the options object handed to the provider, whose `signal` is created
 * only if the provider reads it.
 */
export class Call implements ProviderCallOptions, SlotListener {
  /** Whether the `ModelRequest` append has settled, and its evidence if it failed. */
  requestSettled = false;
  requestEvidence: RecordingEvidence | undefined;
  /** What to do once the request record settles: start the provider, or record the result. */
  waiting: 'start' | 'record' | undefined;
  /** Set once execution ended, so a late provider answer after an abort is ignored. */
  executionDone = false;
  outcome: Outcome | undefined;
  failure: ModelRuntimeError | undefined;
  private hostSignal: AbortSignal | undefined;
  private onHostAbort: (() => void) | undefined;

  constructor(
    readonly job: Job,
    readonly budget: TaskBudget,
    readonly model: string,
    readonly request: GenerationRequest,
    private readonly driver: CallDriver,
    /** Performs the provider call. */
    readonly execute: (call: Call) => Promise<Outcome>,
    /** Receives the recorded outcome, or the error to report. */
    readonly deliver: (outcome: Outcome | undefined, error: ModelRuntimeError | undefined) => void,
  ) {}

  /** What the provider is told (SCH-8): the effective timeout fixed at admission. */
  get timeoutMs(): number {
    return this.job.timeoutMs;
  }

  get signal(): AbortSignal {
    return this.job.signal;
  }

  granted(): void {
    this.driver.run(this);
  }

  left(reason: ModelRuntimeError): void {
    this.driver.endExecution(this, undefined, reason);
  }

  /** Forwards the host's cancellation to the job until {@link detach}. */
  attach(signal: AbortSignal, onAbort: () => void): void {
    this.hostSignal = signal;
    this.onHostAbort = onAbort;
    signal.addEventListener('abort', onAbort, { once: true });
  }

  detach(): void {
    if (this.hostSignal && this.onHostAbort) this.hostSignal.removeEventListener('abort', this.onHostAbort);
    this.hostSignal = this.onHostAbort = undefined;
  }
}
