import type { ModelJobReport } from '@sluice/protocol';
import type { TaskBudget } from '../budget/task-budget.js';
import type { ModelRuntimeError, RecordingEvidence } from '../errors.js';
import type { AppendListener } from '../journal/records.js';
import { keepShape } from '../keep-shape.js';
import { Job } from '../scheduler/job.js';
import type {
  GenerationRequest,
  GenerationStopReason,
  ModelResponse,
  ProviderCallOptions,
  ToolCall,
  Usage,
} from '../types.js';
import type { StreamChannel } from './stream-channel.js';

/** What a provider produced for one call. */
export interface Outcome {
  text: string;
  stopReason: GenerationStopReason;
  usage: Usage;
  toolCalls?: ToolCall[];
  /** The provider's own answer of a complete call, relayed by the model gateway. */
  native?: unknown;
}

/** The steps of one admitted call that the gateway drives; see `ModelRuntime`. */
export interface CallDriver {
  /** JSON bytes of the options `call` would record with `timeoutMs` (SCH-17). */
  optionsBytes(call: Call, timeoutMs: number): number;
  /** `call` waited for room and is admitted since `now`: its request record starts. */
  entered(call: Call, now: number): void;
  /** `call` waited for room and leaves unadmitted: nothing was recorded; it settles with `reason`. */
  turnedAway(call: Call, reason: ModelRuntimeError): void;
  run(call: Call, now?: number): void;
  endExecution(call: Call, outcome: Outcome | undefined, failure: ModelRuntimeError | undefined): void;
  requestAppended(call: Call, error: Error | undefined): void;
  resultAppended(call: Call, error: Error | undefined): void;
}

/**
 * Where a call's provider execution stands: not started (waiting for a slot or for the request
 * record), running (an abort then ends it at once, SCH-8), or done — over or never to start, so
 * a late provider answer after an abort is ignored.
 */
export type Execution = 'idle' | 'running' | 'done';

/** The host's abort signal and the listener that forwards it, while the call runs. */
interface HostAbort {
  signal: AbortSignal;
  listener: () => void;
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
  /** The call id of the client's call this one is a fallback attempt of; recorded with its request. */
  fallbackOf: string | undefined = undefined;
  execution: Execution = 'idle';
  /** Evidence of a failed `ModelRequest` append; the request record settled either way once set. */
  requestEvidence: RecordingEvidence | undefined = undefined;
  outcome: Outcome | undefined = undefined;
  /** Why execution failed, then the error the call settles with. */
  failure: ModelRuntimeError | undefined = undefined;
  private host: HostAbort | undefined = undefined;
  private resolve: ((response: ModelResponse) => void) | undefined = undefined;
  private reject: ((error: ModelRuntimeError) => void) | undefined = undefined;
  private readonly driver: CallDriver;

  /** A call as {@link Job}, plus what only the gateway knows; positional, like the job's. */
  constructor(
    callId: string,
    taskId: string,
    sessionId: string | undefined,
    request: GenerationRequest,
    turnId: string | undefined,
    model: string,
    budget: TaskBudget | undefined,
    channel: StreamChannel | undefined,
    driver: CallDriver,
  ) {
    super(callId, taskId, sessionId, channel ? 'stream' : 'complete', request);
    this.turnId = turnId;
    this.model = model;
    this.budget = budget;
    this.channel = channel;
    this.driver = driver;
  }

  /** Whether the `ModelRequest` append was confirmed or failed. */
  get requestSettled(): boolean {
    return this.requestRecorded || this.requestEvidence !== undefined;
  }

  /** The job's report, with the prompt it belongs to (no request content, SCH-11). */
  override report(now: number): ModelJobReport {
    const report = super.report(now);
    if (this.turnId !== undefined) report.turnId = this.turnId;
    return report;
  }

  override get stopReason(): string | undefined {
    return this.outcome?.stopReason ?? this.failure?.code;
  }

  override get usedTokens(): number {
    const usage = this.outcome?.usage;
    return usage === undefined ? 0 : usage.inputTokens + usage.outputTokens;
  }

  /** Counts the effective options it will record, by arithmetic (SCH-17). */
  override optionsBytes(timeoutMs: number): number {
    return this.driver.optionsBytes(this, timeoutMs);
  }

  override entered(now: number): void {
    this.driver.entered(this, now);
  }

  override turnedAway(reason: ModelRuntimeError): void {
    this.driver.turnedAway(this, reason);
  }

  override granted(now: number): void {
    this.driver.run(this, now);
  }

  override left(reason: ModelRuntimeError): void {
    this.driver.endExecution(this, undefined, reason);
  }

  protected override aborted(reason: ModelRuntimeError): void {
    if (this.execution === 'running') this.driver.endExecution(this, undefined, reason);
  }

  /** The journal's answer for the one append this call has outstanding. */
  appended(error?: Error): void {
    if (this.requestSettled) this.driver.resultAppended(this, error);
    else this.driver.requestAppended(this, error);
  }

  /** Forwards the host's cancellation to the job until {@link detach}. */
  attach(signal: AbortSignal, listener: () => void): void {
    this.host = { signal, listener };
    signal.addEventListener('abort', listener, { once: true });
  }

  detach(): void {
    const host = this.host;
    if (host === undefined) return;
    this.host = undefined;
    host.signal.removeEventListener('abort', host.listener);
  }

  /** A complete call's caller: {@link deliver} settles its promise through these. */
  settleWith(resolve: (response: ModelResponse) => void, reject: (error: ModelRuntimeError) => void): void {
    this.resolve = resolve;
    this.reject = reject;
  }

  /** Hands the recorded outcome, or the error to report, to whoever waits for the call. */
  deliver(outcome: Outcome | undefined, error: ModelRuntimeError | undefined): void {
    const channel = this.channel;
    if (channel) {
      channel.end(
        error
          ? { error }
          : {
              event: {
                type: 'finished',
                stopReason: outcome!.stopReason,
                usage: outcome!.usage,
                toolCalls: outcome!.toolCalls,
              },
            },
      );
      return;
    }
    const { resolve, reject } = this;
    if (!resolve || !reject) throw new Error(`call ${this.callId} settled before it had a caller`);
    this.resolve = this.reject = undefined;
    if (error) reject(error);
    else resolve(outcome as Outcome);
  }
}

/** How a model call ended, as a scheduler observer reads it once the call `finished`. */
export interface FinishedCall {
  /** The error the call settled with; undefined when it succeeded. */
  readonly error: ModelRuntimeError | undefined;
  /** What the provider reported using: what the call's budget was charged (budget spend). */
  readonly usage: Usage | undefined;
}

/**
 * The end of a gateway call that a scheduler observer's `finished` hook is given; undefined
 * for a job that is not a gateway call (a scheduler used alone). For metrics.
 */
export function finishedCall(job: Job): FinishedCall | undefined {
  if (!(job instanceof Call)) return undefined;
  return { error: job.failure, usage: job.outcome?.usage };
}

// see docs/decisions/012-runtime-hot-path.md
keepShape(
  new Call('', '', undefined, { messages: [] }, undefined, '', undefined, undefined, {} as CallDriver),
);
