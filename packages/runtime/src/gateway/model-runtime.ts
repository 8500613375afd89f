import type { ModelLimits, ModelSchedulerSnapshot } from '@sluice/protocol';
import { systemClock, type Clock } from '../clock.js';
import type { ErrorReporter } from '../report-error.js';
import { TaskBudget, validateBudgetLimits, type TaskBudgetLimits } from '../budget/task-budget.js';
import { validatePricing, type Pricing } from '../budget/pricing.js';
import { CancelledError, RuntimeStoppedError } from '../errors.js';
import { spendOf } from '../budget/spend.js';
import {
  TEMPORARY_TASK_PREFIX,
  type Journal,
  type JournalRecord,
  type ModelRequestRecord,
} from '../journal/records.js';
import { isoTimestamp } from '../timestamp.js';
import type { SchedulerConfig } from '../scheduler/config.js';
import { Scheduler, type SchedulerObserver, type SchedulerOptions } from '../scheduler/scheduler.js';
import { CappedScheduler } from '../scheduler/capped-scheduler.js';
import type { TotalSlotCap } from '../scheduler/total-slot-cap.js';
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
   * A cap on executing calls shared with other runtimes (the daemon-wide cap over all models,
   * docs/decisions/037): this runtime's calls take a slot of it with each of their own.
   */
  totalSlots?: TotalSlotCap;
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
  protected readonly scheduler: Scheduler;
  protected readonly recorder: CallRecorder;
  protected readonly executor: CallExecutor;
  protected readonly ids = new CallIdGenerator();
  protected readonly clock: Clock;
  private readonly pricing: Pricing | undefined;
  protected readonly temporaryBudgetLimits: Readonly<TaskBudgetLimits>;
  /** A temporary scope that can neither refuse its one call nor bound its time needs no object. */
  protected readonly trivialTemporaryScope: boolean;

  constructor(options: ModelRuntimeOptions) {
    if (!options.provider) throw new TypeError('provider is required');
    if (!options.journal) throw new TypeError('journal is required');
    this.provider = options.provider;
    this.providerName = options.provider.name;
    this.journal = options.journal;
    this.clock = options.clock ?? systemClock;
    this.scheduler = this.createScheduler(
      {
        ...options.scheduler,
        clock: this.clock,
        observer: options.observer,
        reportError: options.reportError,
      },
      options,
    );
    this.limits = this.scheduler.limits;
    this.pricing = options.pricing && validatePricing(options.pricing);
    this.recorder = new CallRecorder(
      this.journal,
      this.provider,
      this.clock,
      options.wallClockMs,
      this.pricing,
    );
    this.executor = new CallExecutor(
      this.scheduler,
      this.provider,
      this.recorder,
      this.clock,
      this.pricing,
      (call, now) => {
        call.budget?.begin(now);
        this.writeRequest(call);
      },
    );
    this.temporaryBudgetLimits = validateBudgetLimits(
      options.temporaryBudgetLimits ?? DEFAULT_TEMPORARY_BUDGET,
    );
    this.trivialTemporaryScope = isTrivialTemporaryScope(this.temporaryBudgetLimits);
  }

  /** The scheduler this runtime admits through; a runtime with shared limits makes its own. */
  protected createScheduler(options: SchedulerOptions, runtimeOptions: ModelRuntimeOptions): Scheduler {
    const totalSlots = runtimeOptions.totalSlots;
    return totalSlots === undefined
      ? new Scheduler(options)
      : new CappedScheduler({ ...options, totalSlots });
  }

  /** Creates a budget on this runtime's clock, to share across a task's turns. */
  createBudget(taskId: string, limits?: TaskBudgetLimits): TaskBudget {
    return new TaskBudget(taskId, limits, this.clock);
  }

  /**
   * Creates a budget that resumes task `taskId` from what its journal `records` say it spent
   * (interrupted calls at their reserved cost, cost priced as this runtime prices calls).
   */
  resumeBudget(
    taskId: string,
    limits: TaskBudgetLimits | undefined,
    records: readonly JournalRecord[],
  ): TaskBudget {
    return new TaskBudget(taskId, limits, this.clock, spendOf(records, this.pricing));
  }

  /** Generates a complete answer. Throws admission errors synchronously. */
  complete(request: GenerationRequest, options: CallOptions = NO_OPTIONS): Promise<ModelResponse> {
    const call = this.admit(request, options, undefined);
    // The promise exists before the request is recorded, so a journal that fails at once can settle it.
    // The settlers are stored in the call itself: see docs/decisions/012-runtime-hot-path.md
    const answer = new Promise<ModelResponse>((resolve, reject) => call.settleWith(resolve, reject));
    if (!call.waiting) this.writeRequest(call);
    return answer;
  }

  /**
   * {@link complete}, also naming the call's id (a model catalogue links fallback attempts to
   * it). Throws admission errors synchronously.
   */
  completeCall(
    request: GenerationRequest,
    options: CallOptions = NO_OPTIONS,
  ): { callId: string; answer: Promise<ModelResponse> } {
    const call = this.admit(request, options, undefined);
    const answer = new Promise<ModelResponse>((resolve, reject) => call.settleWith(resolve, reject));
    if (!call.waiting) this.writeRequest(call);
    return { callId: call.callId, answer };
  }

  /** Streams an answer. Throws admission errors synchronously; `finished` comes only once recorded. */
  stream(request: GenerationRequest, options: CallOptions = NO_OPTIONS): ModelStream {
    const channel = new StreamChannel();
    const call = this.admit(request, options, channel);
    if (!call.waiting) this.writeRequest(call);
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
   * Starts appending the admitted call's request record, before the provider may start (SCH-9).
   * Here rather than in CallRecorder: see docs/decisions/012-runtime-hot-path.md.
   */
  protected writeRequest(call: Call): void {
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
  }

  /**
   * Budget check, then scheduler admission, which may grant the slot at once; the call then
   * runs from the journal's and the scheduler's notifications, once its request is recorded. A
   * call that may wait for room and finds none starts its budget and record once admitted.
   */
  private admit(request: GenerationRequest, options: CallOptions, channel: StreamChannel | undefined): Call {
    const signal = options.signal;
    const now = this.clock.now();
    const { call, budget } = this.newCall(request, options, channel, now);
    const waitForCapacity = options.waitForCapacity === true;
    if (this.scheduler.admit(call, options.timeoutMs, budget?.remainingActivityMs(), now, waitForCapacity))
      budget?.begin(now);
    if (signal) call.attach(signal, () => this.scheduler.abort(call, new CancelledError('host')));
    return call;
  }
  /**
   * The call for `request` at `now`, with its budget (the caller's, or a temporary one), which is
   * checked first: a stopped budget refuses before anything is admitted. An aborted `signal`
   * refuses too.
   */
  protected newCall(
    request: GenerationRequest,
    options: CallOptions,
    channel: StreamChannel | undefined,
    now: number,
  ): { call: Call; budget: TaskBudget | undefined } {
    if (options.signal?.aborted) throw new CancelledError('host');
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
    if (options.fallbackOf !== undefined) call.fallbackOf = options.fallbackOf;
    return { call, budget };
  }
}

/** True when a temporary budget with `limits` could neither refuse its one call nor bound its time. */
function isTrivialTemporaryScope(limits: Readonly<TaskBudgetLimits>): boolean {
  if (limits.maxActivityMs !== undefined) return false;
  return [limits.maxCalls, limits.maxInputTokens, limits.maxOutputTokens, limits.maxCostMinor].every(
    (limit) => limit === undefined || limit > 0,
  );
}
