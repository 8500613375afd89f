import type { ModelStopReason } from '@sluice/protocol';
import type { TaskBudget } from '../budget/task-budget.js';
import type { ModelRuntimeError, RecordingEvidence } from '../errors.js';
import type { AppendListener } from '../journal/records.js';
import { Job, type JobRequest } from '../scheduler/job.js';
import type { GenerationRequest, ModelResponse, ProviderCallOptions, Usage } from '../types.js';
import type { StreamChannel } from './stream-channel.js';

/** What a provider produced for one call. */
export interface Outcome {
  text: string;
  stopReason: ModelStopReason;
  usage: Usage;
}

/** The steps of one admitted call that the gateway drives; see `ModelRuntime`. */
export interface CallDriver {
  /** JSON bytes of the options `call` would record with `timeoutMs` (SCH-17). */
  optionsBytes(call: Call, timeoutMs: number): number;
  run(call: Call, now?: number): void;
  endExecution(call: Call, outcome: Outcome | undefined, failure: ModelRuntimeError | undefined): void;
  requestAppended(call: Call, error: Error | undefined): void;
  resultAppended(call: Call, error: Error | undefined): void;
}

/** A gateway call's admission request: the job's plus what only the gateway knows. */
export interface CallRequest extends JobRequest {
  request: GenerationRequest;
  turnId: string | undefined;
  model: string;
  budget: TaskBudget | undefined;
  /** Where a streamed call's events go; absent for a complete call. */
  channel: StreamChannel | undefined;
}

/**
 * One call through the gateway: the scheduler's job, its budget, its journal appends, and who
 * receives the result. It is also the options object handed to the provider — whose `signal`
 * is created only if the provider reads it — and the listener of its own journal appends. One
 * object per call keeps the hot path's allocations and closures few. The provider is told
 * `timeoutMs`, the effective timeout fixed at admission (SCH-8).
 */
export class Call extends Job implements ProviderCallOptions, AppendListener {
  declare readonly request: GenerationRequest;
  readonly turnId: string | undefined;
  readonly model: string;
  /** The task's shared budget; undefined for a call in a trivial temporary scope. */
  readonly budget: TaskBudget | undefined;
  readonly channel: StreamChannel | undefined;
  /** Whether the `ModelRequest` append has settled, and its evidence if it failed. */
  requestSettled = false;
  requestEvidence: RecordingEvidence | undefined;
  /** What to do once the request record settles: start the provider, or record the result. */
  waiting: 'start' | 'record' | undefined;
  /** Set once execution ended, so a late provider answer after an abort is ignored. */
  executionDone = false;
  /** Set while the provider runs: an abort then ends execution at once (SCH-8). */
  executing = false;
  outcome: Outcome | undefined;
  failure: ModelRuntimeError | undefined;
  private hostSignal: AbortSignal | undefined;
  private onHostAbort: (() => void) | undefined;
  private resolve: ((response: ModelResponse) => void) | undefined;
  private reject: ((error: ModelRuntimeError) => void) | undefined;
  /** A complete call's result when it settled before its promise existed. */
  private early: { outcome: Outcome | undefined; error: ModelRuntimeError | undefined } | undefined;

  constructor(
    request: CallRequest,
    private readonly driver: CallDriver,
  ) {
    super(request);
    this.turnId = request.turnId;
    this.model = request.model;
    this.budget = request.budget;
    this.channel = request.channel;
  }

  /** Counts the effective options it will record, by arithmetic (SCH-17). */
  override optionsBytes(timeoutMs: number): number {
    return this.driver.optionsBytes(this, timeoutMs);
  }

  override granted(now: number): void {
    this.driver.run(this, now);
  }

  override left(reason: ModelRuntimeError): void {
    this.driver.endExecution(this, undefined, reason);
  }

  protected override aborted(reason: ModelRuntimeError): void {
    if (this.executing) this.driver.endExecution(this, undefined, reason);
  }

  /** The journal's answer for the one append this call has outstanding. */
  appended(error?: Error): void {
    if (this.requestSettled) this.driver.resultAppended(this, error);
    else this.driver.requestAppended(this, error);
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

  /** A complete call's promise, settled by {@link deliver} (even if that already happened). */
  promise(): Promise<ModelResponse> {
    return new Promise<ModelResponse>((resolve, reject) => {
      const early = this.early;
      if (early) {
        this.early = undefined;
        if (early.error) reject(early.error);
        else resolve(early.outcome as Outcome);
        return;
      }
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** Hands the recorded outcome, or the error to report, to whoever waits for the call. */
  deliver(outcome: Outcome | undefined, error: ModelRuntimeError | undefined): void {
    const channel = this.channel;
    if (channel) {
      channel.end(
        error
          ? { error }
          : { event: { type: 'finished', stopReason: outcome!.stopReason, usage: outcome!.usage } },
      );
      return;
    }
    const { resolve, reject } = this;
    if (!resolve || !reject) {
      this.early = { outcome, error };
      return;
    }
    this.resolve = this.reject = undefined;
    if (error) reject(error);
    else resolve(outcome as Outcome);
  }
}
