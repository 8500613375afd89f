import type { ModelLimits, ModelSchedulerSnapshot } from '@sluice/protocol';
import { systemClock, type Clock } from '../clock.js';
import { TaskBudget, validateBudgetLimits, type TaskBudgetLimits } from '../budget/task-budget.js';
import { costOf, validatePricing, type Pricing } from '../budget/pricing.js';
import {
  CancelledError,
  ModelClosureFailure,
  ModelRuntimeError,
  ProviderError,
  RecordingError,
  type RecordingEvidence,
} from '../errors.js';
import type { Journal, JournalRecord, ModelRequestRecord, ModelResultRecord } from '../journal/records.js';
import type { Job } from '../scheduler/job.js';
import type { SchedulerConfig } from '../scheduler/config.js';
import { Scheduler, type SchedulerObserver } from '../scheduler/scheduler.js';
import type { GenerationRequest, ModelProvider, ModelResponse, ModelStreamEvent } from '../types.js';
import { CallIdGenerator } from '../ids.js';
import { isoTimestamp } from '../timestamp.js';
import { Call, type CallDriver, type Outcome } from './call.js';
import { countedOptions, countedOptionsBytes } from './counted-options.js';
import { StreamChannel } from './stream-channel.js';

/** Per-call options of {@link ModelRuntime.complete} and {@link ModelRuntime.stream}. */
export interface CallOptions {
  /** Timeout in ms; inherits the runtime default when absent and can only tighten it (SCH-6). */
  timeoutMs?: number;
  /** Host cancellation. */
  signal?: AbortSignal;
  /** The task's budget, shared across its turns; a bounded temporary one when absent (SCH-2). */
  budget?: TaskBudget;
  sessionId?: string;
  turnId?: string;
  /** Model name; the provider's default when absent. */
  model?: string;
}

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
  /** Wall clock for record timestamps, in epoch ms. */
  wallClockMs?: () => number;
}

/**
 * What hosts program against: any runtime can generate; only a scheduled runtime has a
 * snapshot, and one without returns `undefined`, never "all zero" (SCH-10).
 */
export interface ModelGateway {
  complete(request: GenerationRequest, options?: CallOptions): Promise<ModelResponse>;
  stream(request: GenerationRequest, options?: CallOptions): ModelStream;
  schedulerSnapshot(): ModelSchedulerSnapshot | undefined;
  shutdown(): Promise<void>;
}

/** A streamed call: iterate it for deltas and one final `finished`; `break` cancels the call. */
export interface ModelStream extends AsyncIterable<ModelStreamEvent> {
  readonly callId: string;
  /** Cancels the call as the host; iteration then ends with `CancelledError`. */
  cancel(): void;
}

const DEFAULT_TEMPORARY_BUDGET: TaskBudgetLimits = { maxCalls: 1 };

/**
 * The model gateway of SPEC SCH: every call passes the task budget, the one bounded
 * scheduler and the journal, in that order, around a provider. Admission is synchronous:
 * `complete` and `stream` throw typed errors before returning.
 */
export class ModelRuntime implements ModelGateway, CallDriver {
  readonly limits: Readonly<ModelLimits>;
  readonly provider: ModelProvider;
  readonly journal: Journal;
  private readonly scheduler: Scheduler;
  private readonly ids = new CallIdGenerator();
  private readonly clock: Clock;
  private readonly wallClockMs: () => number;
  private readonly pricing: Pricing | undefined;
  private readonly temporaryBudgetLimits: Readonly<TaskBudgetLimits>;

  constructor(options: ModelRuntimeOptions) {
    if (!options.provider) throw new TypeError('provider is required');
    if (!options.journal) throw new TypeError('journal is required');
    this.provider = options.provider;
    this.journal = options.journal;
    this.clock = options.clock ?? systemClock;
    this.scheduler = new Scheduler({ ...options.scheduler, clock: this.clock, observer: options.observer });
    this.limits = this.scheduler.limits;
    this.wallClockMs = options.wallClockMs ?? Date.now;
    this.pricing = options.pricing && validatePricing(options.pricing);
    this.temporaryBudgetLimits = validateBudgetLimits(
      options.temporaryBudgetLimits ?? DEFAULT_TEMPORARY_BUDGET,
    );
  }

  /** Creates a budget on this runtime's clock, to share across a task's turns. */
  createBudget(taskId: string, limits?: TaskBudgetLimits): TaskBudget {
    return new TaskBudget(taskId, limits, this.clock);
  }

  /** Generates a complete answer. Throws admission errors synchronously. */
  complete(request: GenerationRequest, options: CallOptions = {}): Promise<ModelResponse> {
    let deliver!: Call['deliver'];
    const result = new Promise<ModelResponse>((resolve, reject) => {
      deliver = (outcome, error) => (error ? reject(error) : resolve(outcome as Outcome));
    });
    this.admit(request, options, 'complete', this.completeCall, deliver);
    return result;
  }

  private readonly completeCall = (call: Call): Promise<ModelResponse> =>
    this.provider.complete(call.request, call);

  /** Streams an answer. Throws admission errors synchronously; `finished` comes only once recorded. */
  stream(request: GenerationRequest, options: CallOptions = {}): ModelStream {
    const channel = new StreamChannel();
    const call = this.admit(
      request,
      options,
      'stream',
      (c) => this.pump(c, channel),
      (outcome, error) =>
        channel.end(
          error
            ? { error }
            : { event: { type: 'finished', stopReason: outcome!.stopReason, usage: outcome!.usage } },
        ),
    );
    const { job } = call;
    const scheduler = this.scheduler;
    return {
      callId: job.callId,
      cancel: () => scheduler.abort(job, new CancelledError('host')),
      [Symbol.asyncIterator]: () => ({
        next: () => channel.next(),
        return: () => {
          if (channel.close()) scheduler.abort(job, new CancelledError('consumer_gone'));
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
   * and cleaned up. With `abortRunning`, running calls are cancelled as well.
   */
  async shutdown(options: { abortRunning?: boolean } = {}): Promise<void> {
    this.scheduler.stop();
    if (options.abortRunning) this.scheduler.abortAll(() => new CancelledError('host'));
    await this.scheduler.drained();
  }

  private admit(
    request: GenerationRequest,
    options: CallOptions,
    kind: 'complete' | 'stream',
    execute: Call['execute'],
    deliver: Call['deliver'],
  ): Call {
    const signal = options.signal;
    if (signal?.aborted) throw new CancelledError('host');
    const callId = this.ids.next();
    const budget = options.budget ?? new TaskBudget(`tmp-${callId}`, this.temporaryBudgetLimits, this.clock);
    budget.check();
    const model = options.model ?? this.provider.defaultModel;
    const provider = this.provider.name;
    const { sessionId, turnId } = options;
    const taskId = budget.taskId;
    const { job } = this.scheduler.admit({
      callId,
      taskId,
      sessionId,
      kind,
      timeout: options.timeoutMs,
      capMs: budget.remainingActivityMs(),
      request,
      options: (timeoutMs) => countedOptions(timeoutMs, provider, model, kind, taskId, sessionId, turnId),
      optionsBytes: countedOptionsBytes,
    });
    budget.begin();
    const call = new Call(job, budget, model, request, this, execute, deliver);
    const record: ModelRequestRecord = {
      version: 1,
      type: 'model_request',
      callId,
      taskId,
      at: isoTimestamp(this.wallClockMs()),
      request,
      options: { timeoutMs: job.timeoutMs, provider, model, kind },
    };
    if (sessionId !== undefined) record.sessionId = sessionId;
    if (turnId !== undefined) record.turnId = turnId;
    this.recordRequest(call, record);
    if (signal) call.attach(signal, () => this.scheduler.abort(job, new CancelledError('host')));
    this.scheduler.onSlot(job, call);
    return call;
  }

  /**
   * @internal The slot is held. The provider starts once the request record is confirmed
   * (SCH-9) and not after an abort; execution ends when the provider answers or the job is
   * aborted, whichever comes first (SCH-8). Event-driven, so a call costs few promises.
   */
  run(call: Call): void {
    if (!call.requestSettled) {
      call.waiting = 'start';
      return;
    }
    const { job } = call;
    if (call.requestEvidence)
      return this.endExecution(call, undefined, new RecordingError(call.requestEvidence));
    if (job.abortReason) return this.endExecution(call, undefined, job.abortReason);
    this.scheduler.startExecuting(job);
    job.abortHook = (reason) => this.endExecution(call, undefined, reason);
    let answer: Promise<Outcome>;
    try {
      answer = call.execute(call);
    } catch (error) {
      answer = Promise.reject(error);
    }
    answer.then(
      (outcome) => this.endExecution(call, outcome, undefined),
      (error: unknown) => this.endExecution(call, undefined, this.classify(error, job)),
    );
  }

  /**
   * @internal Execution is over (or never started): release the slot at once (SCH-5) and
   * record the result once the request record has settled (SCH-15).
   */
  endExecution(call: Call, outcome: Outcome | undefined, failure: ModelRuntimeError | undefined): void {
    if (call.executionDone) return;
    call.executionDone = true;
    const { job } = call;
    job.abortHook = undefined;
    call.outcome = outcome;
    call.failure = failure && job.abortReason ? job.abortReason : failure;
    this.scheduler.releaseSlot(job);
    call.detach();
    if (call.requestSettled) this.recordResult(call);
    else call.waiting = 'record';
  }

  private recordRequest(call: Call, record: ModelRequestRecord): void {
    const { job } = call;
    this.append(job, record).then(
      () => {
        job.pendingAppends--;
        job.requestRecorded = true;
        this.requestSettled(call, undefined);
      },
      (error: unknown) => {
        job.pendingAppends--;
        const evidence = this.evidence(job, record, error);
        // A queued job leaves the queue at once; the provider never starts (SCH-15).
        this.scheduler.abort(job, new RecordingError(evidence));
        this.requestSettled(call, evidence);
      },
    );
  }

  private requestSettled(call: Call, evidence: RecordingEvidence | undefined): void {
    call.requestSettled = true;
    call.requestEvidence = evidence;
    const next = call.waiting;
    call.waiting = undefined;
    if (next === 'start') this.run(call);
    else if (next === 'record') this.recordResult(call);
  }

  /** Records the result, then settles; success is delivered only once it is confirmed (SCH-16). */
  private recordResult(call: Call): void {
    const { job, outcome, failure } = call;
    if (call.requestEvidence) {
      const error =
        failure instanceof RecordingError
          ? failure
          : new RecordingError(call.requestEvidence, { cause: failure });
      return this.settle(call, error);
    }
    const costMinor = costOf(outcome?.usage, this.pricing);
    const record = this.resultRecord(job, outcome, failure, costMinor);
    this.append(job, record).then(
      () => {
        job.pendingAppends--;
        job.resultRecorded = true;
        this.settle(call, failure);
      },
      (error: unknown) => {
        job.pendingAppends--;
        const evidence = this.evidence(job, record, error);
        this.settle(call, new ModelClosureFailure(evidence, failure?.code ?? 'success', { cause: failure }));
      },
    );
  }

  /** Settles the budget, frees the in-flight unit, then delivers. */
  private settle(call: Call, error: ModelRuntimeError | undefined): void {
    const { job, outcome } = call;
    job.stopReason = outcome?.stopReason ?? error?.code;
    call.budget.settle(outcome?.usage, costOf(outcome?.usage, this.pricing));
    this.scheduler.finish(job);
    call.deliver(error ? undefined : outcome, error);
  }

  /** Pulls the provider's stream only as fast as the consumer reads it. */
  private async pump(call: Call, channel: StreamChannel): Promise<Outcome> {
    const { job } = call;
    const iterator = this.provider.stream(call.request, call)[Symbol.asyncIterator]();
    let text = '';
    try {
      for (;;) {
        await channel.demand(job);
        const step = await job.race(iterator.next());
        if (step.done) return { text, stopReason: 'end_turn', usage: { inputTokens: 0, outputTokens: 0 } };
        const event = step.value;
        if (event.type === 'finished') return { text, stopReason: event.stopReason, usage: event.usage };
        text += event.text;
        channel.deliver(event);
      }
    } catch (error) {
      void Promise.resolve(iterator.return?.()).catch(() => undefined);
      throw error;
    }
  }

  private classify(error: unknown, job: Job): ModelRuntimeError {
    if (job.abortReason) return job.abortReason;
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

  private resultRecord(
    job: Job,
    outcome: Outcome | undefined,
    failure: ModelRuntimeError | undefined,
    costMinor: number,
  ): ModelResultRecord {
    const record: ModelResultRecord = {
      version: 1,
      type: 'model_result',
      callId: job.callId,
      taskId: job.taskId,
      at: isoTimestamp(this.wallClockMs()),
      outcome: outcome ? 'success' : 'error',
      durationMs: Math.round(this.clock.now() - job.admittedAt),
    };
    if (job.sessionId !== undefined) record.sessionId = job.sessionId;
    if (outcome) {
      record.stopReason = outcome.stopReason;
      record.usage = outcome.usage;
      record.text = outcome.text;
      if (this.pricing) record.costMinor = costMinor;
    } else if (failure) record.error = { code: failure.code, message: failure.message };
    return record;
  }

  /** Starts an append and counts it as outstanding; the caller decrements when it settles. */
  private append(job: Job, record: JournalRecord): Promise<void> {
    job.pendingAppends++;
    try {
      return this.journal.append(record);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private evidence(job: Job, record: JournalRecord, error: unknown): RecordingEvidence {
    return {
      callId: job.callId,
      record: record.type,
      journal: this.journal.name,
      failedAt: isoTimestamp(this.wallClockMs()),
      error: error instanceof Error ? error.message : String(error),
    };
  }
}
