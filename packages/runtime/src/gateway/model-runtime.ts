import type { ModelLimits, ModelSchedulerSnapshot } from '@sluice/protocol';
import { systemClock, type Clock } from '../clock.js';
import type { ErrorReporter } from '../report-error.js';
import { TaskBudget, validateBudgetLimits, type TaskBudgetLimits } from '../budget/task-budget.js';
import { costMicroOf, validatePricing, type Pricing } from '../budget/pricing.js';
import {
  CancelledError,
  ModelClosureFailure,
  ModelRuntimeError,
  ProviderError,
  RecordingError,
  RuntimeStoppedError,
} from '../errors.js';
import { TEMPORARY_TASK_PREFIX, type Journal } from '../journal/records.js';
import type { SchedulerConfig } from '../scheduler/config.js';
import { Scheduler, type SchedulerObserver } from '../scheduler/scheduler.js';
import type { GenerationRequest, ModelProvider, ModelResponse } from '../types.js';
import { CallIdGenerator } from '../ids.js';
import { Call, type CallDriver, type Outcome } from './call.js';
import { CallRecorder } from './call-recorder.js';
import type { CallOptions, ModelGateway, ModelStream } from './model-gateway.js';
import { StreamChannel } from './stream-channel.js';
import { pumpStream } from './stream-pump.js';

/** How a {@link ModelRuntime} is put together. */
export interface ModelRuntimeOptions {
  provider: ModelProvider;
  journal: Journal;
  scheduler?: SchedulerConfig;
  clock?: Clock;
  /** Limits of the temporary budget a call gets when it passes none. */
  temporaryBudgetLimits?: TaskBudgetLimits;
  pricing?: Pricing;
  observer?: SchedulerObserver;
  /** Gets what an observer hook throws; default {@link rethrowLater}. */
  reportError?: ErrorReporter;
  /** Wall clock for record timestamps and call ids, in epoch ms; default: derived from `clock`. */
  wallClockMs?: () => number;
}

/** The options of a call that passes none: shared, so that such a call allocates no object for them. */
const NO_OPTIONS: CallOptions = Object.freeze({});

const DEFAULT_TEMPORARY_BUDGET: TaskBudgetLimits = { maxCalls: 1 };

/**
 * The model gateway of SPEC SCH: every call passes the task budget, the one bounded
 * scheduler and the journal, in that order, around a provider. Admission is synchronous:
 * `complete` and `stream` throw typed errors before returning.
 */
export class ModelRuntime implements ModelGateway, CallDriver {
  readonly limits: Readonly<ModelLimits>;
  readonly provider: ModelProvider;
  readonly providerName: string;
  readonly journal: Journal;
  private readonly scheduler: Scheduler;
  private readonly recorder: CallRecorder;
  private readonly ids = new CallIdGenerator();
  private readonly clock: Clock;
  private readonly pricing: Pricing | undefined;
  private readonly temporaryBudgetLimits: Readonly<TaskBudgetLimits>;
  /** A temporary scope that can neither refuse its one call nor bound its time needs no object. */
  private readonly trivialTemporaryScope: boolean;

  constructor(options: ModelRuntimeOptions) {
    if (!options.provider) throw new TypeError('provider is required');
    if (!options.journal) throw new TypeError('journal is required');
    this.provider = options.provider;
    this.providerName = options.provider.name;
    this.journal = options.journal;
    this.clock = options.clock ?? systemClock;
    this.scheduler = new Scheduler({
      ...options.scheduler,
      clock: this.clock,
      observer: options.observer,
      reportError: options.reportError,
    });
    this.limits = this.scheduler.limits;
    this.pricing = options.pricing && validatePricing(options.pricing);
    this.recorder = new CallRecorder(
      this.journal,
      this.provider,
      this.clock,
      options.wallClockMs,
      this.pricing,
    );
    this.temporaryBudgetLimits = validateBudgetLimits(
      options.temporaryBudgetLimits ?? DEFAULT_TEMPORARY_BUDGET,
    );
    this.trivialTemporaryScope = isTrivialTemporaryScope(this.temporaryBudgetLimits);
  }

  /** Creates a budget on this runtime's clock, to share across a task's turns. */
  createBudget(taskId: string, limits?: TaskBudgetLimits): TaskBudget {
    return new TaskBudget(taskId, limits, this.clock);
  }

  /** Generates a complete answer. Throws admission errors synchronously. */
  complete(request: GenerationRequest, options: CallOptions = NO_OPTIONS): Promise<ModelResponse> {
    const call = this.admit(request, options, undefined);
    // The promise exists before the request is recorded, so a journal that fails at once can settle it.
    // The settlers are stored in the call itself: see docs/decisions/012-runtime-hot-path.md
    const answer = new Promise<ModelResponse>((resolve, reject) => call.settleWith(resolve, reject));
    this.recorder.writeRequest(call);
    return answer;
  }

  /** Streams an answer. Throws admission errors synchronously; `finished` comes only once recorded. */
  stream(request: GenerationRequest, options: CallOptions = NO_OPTIONS): ModelStream {
    const channel = new StreamChannel();
    const call = this.admit(request, options, channel);
    this.recorder.writeRequest(call);
    const scheduler = this.scheduler;
    return {
      callId: call.callId,
      cancel: () => scheduler.abort(call, new CancelledError('host')),
      [Symbol.asyncIterator]: () => ({
        next: () => channel.next(),
        return: () => {
          if (channel.close()) scheduler.abort(call, new CancelledError('consumer_gone'));
          return Promise.resolve({ value: undefined, done: true });
        },
      }),
    };
  }

  /** The scheduler's live state, without any prompt content (SCH-11). */
  schedulerSnapshot(): ModelSchedulerSnapshot {
    return this.scheduler.snapshot();
  }

  /**
   * Stops admitting, cancels queued calls and waits until every accepted call has recorded
   * and cleaned up. With `abortRunning`, running calls are stopped as well, with `RuntimeStopped`.
   */
  async shutdown(options: { abortRunning?: boolean } = {}): Promise<void> {
    this.scheduler.stop();
    if (options.abortRunning) this.scheduler.abortAll(() => new RuntimeStoppedError());
    await this.scheduler.drained();
  }

  /**
   * Budget check, then scheduler admission, which may grant the slot at once; the call then
   * runs from the journal's and the scheduler's notifications, once its request is recorded.
   */
  private admit(request: GenerationRequest, options: CallOptions, channel: StreamChannel | undefined): Call {
    const signal = options.signal;
    if (signal?.aborted) throw new CancelledError('host');
    const now = this.clock.now();
    const wallMs = this.recorder.wallAt(now);
    const callId = this.ids.next(wallMs);
    let budget = options.budget;
    if (budget === undefined && !this.trivialTemporaryScope)
      budget = new TaskBudget(TEMPORARY_TASK_PREFIX + callId, this.temporaryBudgetLimits, this.clock);
    budget?.check();
    const call = new Call(
      callId,
      budget ? budget.taskId : TEMPORARY_TASK_PREFIX + callId,
      options.sessionId,
      request,
      options.turnId,
      options.model ?? this.provider.defaultModel,
      budget,
      channel,
      this,
    );
    this.scheduler.admit(call, options.timeoutMs, budget?.remainingActivityMs(), now);
    budget?.begin(now);
    if (signal) call.attach(signal, () => this.scheduler.abort(call, new CancelledError('host')));
    return call;
  }

  /** @internal Counts the options `call` records (SCH-17). */
  optionsBytes(call: Call, timeoutMs: number): number {
    return this.recorder.optionsBytes(call, timeoutMs);
  }

  /**
   * @internal The slot is held. The provider starts once the request record is confirmed
   * (SCH-9) and not after an abort; execution ends when the provider answers or the job is
   * aborted, whichever comes first (SCH-8). Event-driven, so a call costs few promises.
   */
  run(call: Call, now?: number): void {
    if (!call.requestSettled) return; // starts once the request record settles
    if (call.requestEvidence)
      return this.endExecution(call, undefined, new RecordingError(call.requestEvidence));
    if (call.abortReason) return this.endExecution(call, undefined, call.abortReason);
    this.scheduler.startExecuting(call, now ?? this.clock.now());
    call.execution = 'running';
    let answer: Promise<Outcome>;
    try {
      answer = call.channel
        ? pumpStream(this.provider, call, call.channel)
        : this.provider.complete(call.request, call);
    } catch (error) {
      answer = Promise.reject(error);
    }
    answer.then(
      (outcome) => this.endExecution(call, outcome, undefined),
      (error: unknown) => this.endExecution(call, undefined, this.classify(error, call)),
    );
  }

  /**
   * @internal Execution is over (or never started): release the slot at once (SCH-5) and
   * record the result once the request record has settled (SCH-15).
   */
  endExecution(call: Call, outcome: Outcome | undefined, failure: ModelRuntimeError | undefined): void {
    if (call.execution === 'done') return;
    call.execution = 'done';
    call.outcome = outcome;
    call.failure = failure && call.abortReason ? call.abortReason : failure;
    const now = this.clock.now();
    this.scheduler.releaseSlot(call, now);
    call.detach();
    if (call.requestSettled) this.recordResult(call, now); // else once the request record settles
  }

  /** @internal The request record is confirmed, or failed with `error`. */
  requestAppended(call: Call, error: Error | undefined): void {
    call.pendingAppends--;
    // What waited for this record: an execution that ended (its result is recorded next) or a
    // granted slot (the provider may start). A queued call waits for its slot instead.
    const ended = call.execution === 'done';
    const granted = !ended && call.phase === 'Preparing';
    if (error) {
      call.requestEvidence = this.recorder.evidence(call, 'model_request', error);
      // A queued job leaves the queue at once and settles; the provider never starts (SCH-15).
      this.scheduler.abort(call, new RecordingError(call.requestEvidence));
    } else call.requestRecorded = true;
    if (ended) this.recordResult(call, this.clock.now());
    else if (granted) this.run(call);
  }

  /** @internal The result record is confirmed, or failed with `error`: the call settles. */
  resultAppended(call: Call, error: Error | undefined): void {
    call.pendingAppends--;
    const { failure } = call;
    if (error) {
      const evidence = this.recorder.evidence(call, 'model_result', error);
      return this.settle(
        call,
        new ModelClosureFailure(evidence, failure?.code ?? 'success', { cause: failure }),
      );
    }
    call.resultRecorded = true;
    this.settle(call, failure);
  }

  /** Records the result at `now`, then settles; success is delivered only once it is confirmed (SCH-16). */
  private recordResult(call: Call, now: number): void {
    const { failure } = call;
    if (call.requestEvidence) {
      const error =
        failure instanceof RecordingError
          ? failure
          : new RecordingError(call.requestEvidence, { cause: failure });
      return this.settle(call, error);
    }
    this.recorder.writeResult(call, now);
  }

  /** Settles the budget, frees the in-flight unit, then delivers. */
  private settle(call: Call, error: ModelRuntimeError | undefined): void {
    const { outcome } = call;
    call.failure = error; // the call's stop reason, with the outcome's
    call.budget?.settle(outcome?.usage, costMicroOf(outcome?.usage, this.pricing));
    this.scheduler.finish(call);
    call.deliver(error ? undefined : outcome, error);
  }

  private classify(error: unknown, call: Call): ModelRuntimeError {
    if (call.abortReason) return call.abortReason;
    if (error instanceof ModelRuntimeError) return error;
    const message = error instanceof Error ? error.message : String(error);
    return new ProviderError(
      `Provider "${this.provider.name}" failed: ${message.slice(0, 500)}`,
      false,
      undefined,
      {
        cause: error,
      },
    );
  }
}

/** True when a temporary budget with `limits` could neither refuse its one call nor bound its time. */
function isTrivialTemporaryScope(limits: Readonly<TaskBudgetLimits>): boolean {
  if (limits.maxActivityMs !== undefined) return false;
  return [limits.maxCalls, limits.maxInputTokens, limits.maxOutputTokens, limits.maxCostMinor].every(
    (limit) => limit === undefined || limit > 0,
  );
}
