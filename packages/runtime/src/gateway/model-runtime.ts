import type { ModelLimits, ModelSchedulerSnapshot } from '@sluice/protocol';
import { systemClock, type Clock } from '../clock.js';
import type { ErrorReporter } from '../report-error.js';
import { TaskBudget, validateBudgetLimits, type TaskBudgetLimits } from '../budget/task-budget.js';
import { validatePricing, type Pricing } from '../budget/pricing.js';
import { CancelledError, RuntimeStoppedError, type ModelRuntimeError } from '../errors.js';
import { TEMPORARY_TASK_PREFIX, type Journal, type ModelRequestRecord } from '../journal/records.js';
import { isoTimestamp } from '../timestamp.js';
import type { SchedulerConfig } from '../scheduler/config.js';
import { Scheduler, type SchedulerObserver } from '../scheduler/scheduler.js';
import type { CapacityPort } from '../scheduler/capacity-port.js';
import type { Job } from '../scheduler/job.js';
import type { GenerationRequest, ModelProvider, ModelResponse } from '../types.js';
import { CallIdGenerator } from '../ids.js';
import { Call } from './call.js';
import { CallExecutor } from './call-executor.js';
import { CallRecorder } from './call-recorder.js';
import type { CallOptions, ModelGateway, ModelStream } from './model-gateway.js';
import { StreamChannel } from './stream-channel.js';

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
  /**
   * Limits shared with other daemons (a fleet backend, e.g. Redis); the runtime owns it from
   * here and closes it on shutdown. Absent, the limits are this process's own.
   */
  capacity?: CapacityPort<Job>;
}

/** The options of a call that passes none: shared, so that such a call allocates no object for them. */
const NO_OPTIONS: CallOptions = Object.freeze({});

const DEFAULT_TEMPORARY_BUDGET: TaskBudgetLimits = { maxCalls: 1 };

/**
 * The model gateway of SPEC SCH: every call passes the task budget, the one bounded
 * scheduler and the journal, in that order, around a provider. Admission is synchronous:
 * `complete` and `stream` throw typed errors before returning.
 */
export class ModelRuntime implements ModelGateway {
  readonly limits: Readonly<ModelLimits>;
  readonly provider: ModelProvider;
  readonly providerName: string;
  readonly journal: Journal;
  private readonly scheduler: Scheduler;
  private readonly recorder: CallRecorder;
  private readonly executor: CallExecutor;
  private readonly ids = new CallIdGenerator();
  private readonly clock: Clock;
  private readonly pricing: Pricing | undefined;
  private readonly temporaryBudgetLimits: Readonly<TaskBudgetLimits>;
  /** A temporary scope that can neither refuse its one call nor bound its time needs no object. */
  private readonly trivialTemporaryScope: boolean;
  /** Whether admission goes through a shared capacity port (one round trip) instead of in process. */
  private readonly shared: boolean;

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
      capacity: options.capacity,
    });
    this.shared = options.capacity !== undefined;
    this.limits = this.scheduler.limits;
    this.pricing = options.pricing && validatePricing(options.pricing);
    this.recorder = new CallRecorder(
      this.journal,
      this.provider,
      this.clock,
      options.wallClockMs,
      this.pricing,
    );
    this.executor = new CallExecutor(this.scheduler, this.provider, this.recorder, this.clock, this.pricing);
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
    if (this.shared) return this.completeShared(request, options);
    const call = this.admit(request, options, undefined);
    // The promise exists before the request is recorded, so a journal that fails at once can settle it.
    // The settlers are stored in the call itself: see docs/decisions/012-runtime-hot-path.md
    const answer = new Promise<ModelResponse>((resolve, reject) => call.settleWith(resolve, reject));
    this.writeRequest(call);
    return answer;
  }

  /** Streams an answer. Throws admission errors synchronously; `finished` comes only once recorded. */
  stream(request: GenerationRequest, options: CallOptions = NO_OPTIONS): ModelStream {
    if (this.shared) return this.streamShared(request, options);
    const channel = new StreamChannel();
    const call = this.admit(request, options, channel);
    this.writeRequest(call);
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

  /**
   * `complete` with shared limits: local checks throw synchronously as always; the fleet's
   * answer (one round trip) either admits the call, which then runs as any other, or rejects
   * the returned promise with its typed refusal, before anything was recorded.
   */
  private completeShared(request: GenerationRequest, options: CallOptions): Promise<ModelResponse> {
    const { call, admitted } = this.admitShared(request, options, undefined);
    const answer = new Promise<ModelResponse>((resolve, reject) => call.settleWith(resolve, reject));
    admitted.then(
      () => this.writeRequest(call),
      (error: ModelRuntimeError) => call.deliver(undefined, error),
    );
    return answer;
  }

  /** `stream` with shared limits: a refusal ends the stream with its error before any event. */
  private streamShared(request: GenerationRequest, options: CallOptions): ModelStream {
    const channel = new StreamChannel();
    const { call, admitted } = this.admitShared(request, options, channel);
    admitted.then(
      () => this.writeRequest(call),
      (error: ModelRuntimeError) => call.deliver(undefined, error),
    );
    // A cancel before the fleet answered applies once the call is admitted.
    const abort = (reason: ModelRuntimeError): void => {
      if (call.admitted) this.scheduler.abort(call, reason);
      else admitted.then(() => this.scheduler.abort(call, reason), noop);
    };
    return {
      callId: call.callId,
      cancel: () => abort(new CancelledError('host')),
      [Symbol.asyncIterator]: () => ({
        next: () => channel.next(),
        return: () => {
          if (channel.close()) abort(new CancelledError('consumer_gone'));
          return Promise.resolve({ value: undefined, done: true });
        },
      }),
    };
  }

  /**
   * Starts appending the admitted call's request record, before the provider may start (SCH-9).
   * Here rather than in CallRecorder: see docs/decisions/012-runtime-hot-path.md.
   */
  private writeRequest(call: Call): void {
    const recorder = this.recorder;
    // Built whole, absent members undefined (docs/decisions/012).
    const record: ModelRequestRecord = {
      version: 1,
      type: 'model_request',
      callId: call.callId,
      taskId: call.taskId,
      sessionId: call.sessionId,
      turnId: call.turnId,
      at: isoTimestamp(recorder.wallAt(call.admittedAt)),
      request: call.request,
      options: recorder.recordedOptions(call),
    };
    call.pendingAppends++;
    this.journal.write(record, call);
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
    await this.scheduler.closeCapacity();
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
      this.executor,
    );
    this.scheduler.admit(call, options.timeoutMs, budget?.remainingActivityMs(), now);
    budget?.begin(now);
    if (signal) call.attach(signal, () => this.scheduler.abort(call, new CancelledError('host')));
    return call;
  }

  /**
   * Builds the call and runs the shared admission: what fails locally throws now; `admitted`
   * settles with the fleet's answer. A host signal aborted meanwhile cancels the admitted call.
   */
  private admitShared(
    request: GenerationRequest,
    options: CallOptions,
    channel: StreamChannel | undefined,
  ): { call: Call; admitted: Promise<void> } {
    const signal = options.signal;
    if (signal?.aborted) throw new CancelledError('host');
    const now = this.clock.now();
    const callId = this.ids.next(this.recorder.wallAt(now));
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
      this.executor,
    );
    const pool = `${this.providerName}/${call.model}`;
    const admitted = this.scheduler
      .admitShared(call, pool, options.timeoutMs, budget?.remainingActivityMs())
      .then(() => {
        budget?.begin(call.admittedAt);
        if (signal === undefined) return;
        if (signal.aborted) this.scheduler.abort(call, new CancelledError('host'));
        else call.attach(signal, () => this.scheduler.abort(call, new CancelledError('host')));
      });
    return { call, admitted };
  }
}

const noop = (): void => undefined;

/** True when a temporary budget with `limits` could neither refuse its one call nor bound its time. */
function isTrivialTemporaryScope(limits: Readonly<TaskBudgetLimits>): boolean {
  if (limits.maxActivityMs !== undefined) return false;
  return [limits.maxCalls, limits.maxInputTokens, limits.maxOutputTokens, limits.maxCostMinor].every(
    (limit) => limit === undefined || limit > 0,
  );
}
