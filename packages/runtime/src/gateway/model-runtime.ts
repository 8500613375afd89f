import { randomUUID } from 'node:crypto';
import type { ModelLimits, ModelSchedulerSnapshot, ModelStopReason } from '@sluice/protocol';
import { systemClock, type Clock } from '../clock.js';
import { TaskBudget, type TaskBudgetLimits } from '../budget/task-budget.js';
import { costOf, validatePricing, type Pricing } from '../budget/pricing.js';
import {
  CancelledError,
  ModelClosureFailure,
  ModelRuntimeError,
  ProviderError,
  RecordingError,
  type RecordingEvidence,
} from '../errors.js';
import type { Journal, JournalRecord, ModelResultRecord, RecordedOptions } from '../journal/records.js';
import type { Job } from '../scheduler/job.js';
import type { SchedulerConfig } from '../scheduler/config.js';
import { Scheduler, type SchedulerObserver } from '../scheduler/scheduler.js';
import type { GenerationRequest, ModelProvider, ModelResponse, ModelStreamEvent, Usage } from '../types.js';
import { raceAbort } from './abortable.js';
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
  /** Wall clock for record timestamps. */
  wallClock?: () => Date;
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

interface Outcome {
  text: string;
  stopReason: ModelStopReason;
  usage: Usage;
}

const DEFAULT_TEMPORARY_BUDGET: TaskBudgetLimits = { maxCalls: 1 };

/**
 * The model gateway of SPEC SCH: every call passes the task budget, the one bounded
 * scheduler and the journal, in that order, around a provider. Admission is synchronous:
 * `complete` and `stream` throw typed errors before returning.
 */
export class ModelRuntime implements ModelGateway {
  readonly limits: Readonly<ModelLimits>;
  readonly provider: ModelProvider;
  readonly journal: Journal;
  private readonly scheduler: Scheduler;
  private readonly clock: Clock;
  private readonly wallClock: () => Date;
  private readonly pricing: Pricing | undefined;
  private readonly temporaryBudgetLimits: TaskBudgetLimits;

  constructor(options: ModelRuntimeOptions) {
    if (!options.provider) throw new TypeError('provider is required');
    if (!options.journal) throw new TypeError('journal is required');
    this.provider = options.provider;
    this.journal = options.journal;
    this.clock = options.clock ?? systemClock;
    this.scheduler = new Scheduler({ ...options.scheduler, clock: this.clock, observer: options.observer });
    this.limits = this.scheduler.limits;
    this.wallClock = options.wallClock ?? (() => new Date());
    this.pricing = options.pricing && validatePricing(options.pricing);
    this.temporaryBudgetLimits = options.temporaryBudgetLimits ?? DEFAULT_TEMPORARY_BUDGET;
    new TaskBudget('validation', this.temporaryBudgetLimits, this.clock);
  }

  /** Creates a budget on this runtime's clock, to share across a task's turns. */
  createBudget(taskId: string, limits?: TaskBudgetLimits): TaskBudget {
    return new TaskBudget(taskId, limits, this.clock);
  }

  /** Generates a complete answer. Throws admission errors synchronously. */
  complete(request: GenerationRequest, options: CallOptions = {}): Promise<ModelResponse> {
    const call = this.admit(request, options, 'complete');
    return this.drive(call, (signal) =>
      this.provider.complete(request, { signal, timeoutMs: call.job.timeoutMs, model: call.options.model }),
    );
  }

  /** Streams an answer. Throws admission errors synchronously; `finished` comes only once recorded. */
  stream(request: GenerationRequest, options: CallOptions = {}): ModelStream {
    const call = this.admit(request, options, 'stream');
    const channel = new StreamChannel();
    const { job } = call;
    this.drive(call, (signal) => this.pump(request, call, channel, signal)).then(
      (outcome) =>
        channel.end({ event: { type: 'finished', stopReason: outcome.stopReason, usage: outcome.usage } }),
      (error: unknown) => channel.end({ error }),
    );
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

  private admit(request: GenerationRequest, options: CallOptions, kind: 'complete' | 'stream') {
    if (options.signal?.aborted) throw new CancelledError('host');
    const budget = options.budget ?? new TaskBudget(`tmp-${randomUUID()}`, this.temporaryBudgetLimits, this.clock);
    budget.check();
    const callId = randomUUID();
    const model = options.model ?? this.provider.defaultModel;
    const correlation = { taskId: budget.taskId, sessionId: options.sessionId, turnId: options.turnId };
    const admission = this.scheduler.admit({
      callId,
      taskId: budget.taskId,
      sessionId: options.sessionId,
      kind,
      timeout: options.timeoutMs,
      capMs: budget.remainingActivityMs(),
      request,
      options: (timeoutMs): RecordedOptions & { correlation: typeof correlation } => ({
        timeoutMs,
        provider: this.provider.name,
        model,
        kind,
        correlation,
      }),
    });
    budget.begin();
    const { job } = admission;
    const recorded: RecordedOptions = { timeoutMs: job.timeoutMs, provider: this.provider.name, model, kind };
    const requestAppend = this.append(job, {
      version: 1,
      type: 'model_request',
      callId,
      taskId: budget.taskId,
      ...(options.sessionId !== undefined && { sessionId: options.sessionId }),
      ...(options.turnId !== undefined && { turnId: options.turnId }),
      at: this.wallClock().toISOString(),
      request,
      options: recorded,
    });
    requestAppend.then((evidence) => {
      if (evidence) this.scheduler.abort(job, new RecordingError(evidence));
      else job.requestRecorded = true;
    });
    const signal = options.signal;
    const onHostAbort = () => this.scheduler.abort(job, new CancelledError('host'));
    signal?.addEventListener('abort', onHostAbort, { once: true });
    return {
      job,
      budget,
      requestAppend,
      options: { ...options, model },
      detach: () => signal?.removeEventListener('abort', onHostAbort),
    };
  }

  /**
   * Drives one admitted call to its end: slot → request record confirmed → provider →
   * slot released → result record confirmed → settle. Returns the outcome only once recorded.
   */
  private async drive(
    call: ReturnType<ModelRuntime['admit']>,
    execute: (signal: AbortSignal) => Promise<Outcome>,
  ): Promise<Outcome> {
    const { job, budget, requestAppend } = call;
    let outcome: Outcome | undefined;
    let failure: ModelRuntimeError | undefined;
    try {
      await this.scheduler.waitForSlot(job);
      const evidence = await requestAppend;
      if (evidence) throw new RecordingError(evidence);
      if (job.abortReason) throw job.abortReason;
      this.scheduler.startExecuting(job);
      outcome = await raceAbort(execute(job.signal), job.signal);
    } catch (error) {
      failure = this.classify(error, job);
    }
    this.scheduler.releaseSlot(job);
    call.detach();

    let delivered: ModelRuntimeError | undefined = failure;
    const requestEvidence = await requestAppend;
    if (requestEvidence) {
      delivered = failure instanceof RecordingError ? failure : new RecordingError(requestEvidence, { cause: failure });
    } else {
      const costMinor = costOf(outcome?.usage, this.pricing);
      const resultEvidence = await this.append(job, this.resultRecord(job, outcome, failure, costMinor));
      if (resultEvidence) {
        delivered = new ModelClosureFailure(resultEvidence, failure?.code ?? 'success', { cause: failure });
      } else job.resultRecorded = true;
    }
    job.stopReason = outcome?.stopReason ?? delivered?.code;
    budget.settle(outcome?.usage, costOf(outcome?.usage, this.pricing));
    this.scheduler.finish(job);
    if (delivered) throw delivered;
    return outcome as Outcome;
  }

  /** Pulls the provider's stream only as fast as the consumer reads it. */
  private async pump(
    request: GenerationRequest,
    call: ReturnType<ModelRuntime['admit']>,
    channel: StreamChannel,
    signal: AbortSignal,
  ): Promise<Outcome> {
    const iterator = this.provider
      .stream(request, { signal, timeoutMs: call.job.timeoutMs, model: call.options.model })
      [Symbol.asyncIterator]();
    let text = '';
    try {
      for (;;) {
        await channel.demand(signal);
        const step = await raceAbort(iterator.next(), signal);
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
    return new ProviderError(`Provider "${this.provider.name}" failed: ${message.slice(0, 500)}`, false, undefined, {
      cause: error,
    });
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
      ...(job.sessionId !== undefined && { sessionId: job.sessionId }),
      at: this.wallClock().toISOString(),
      outcome: outcome ? 'success' : 'error',
      durationMs: Math.round(this.clock.now() - job.admittedAt),
    };
    if (outcome) {
      record.stopReason = outcome.stopReason;
      record.usage = outcome.usage;
      record.text = outcome.text;
      if (this.pricing) record.costMinor = costMinor;
    } else if (failure) record.error = { code: failure.code, message: failure.message };
    return record;
  }

  /** Appends and tracks a record; resolves with evidence on failure, never rejects. */
  private append(job: Job, record: JournalRecord): Promise<RecordingEvidence | undefined> {
    job.pendingAppends++;
    let pending: Promise<void>;
    try {
      pending = this.journal.append(record);
    } catch (error) {
      pending = Promise.reject(error);
    }
    return pending.then(
      () => {
        job.pendingAppends--;
        return undefined;
      },
      (error: unknown) => {
        job.pendingAppends--;
        return {
          callId: job.callId,
          record: record.type,
          journal: this.journal.name,
          failedAt: this.wallClock().toISOString(),
          error: error instanceof Error ? error.message : String(error),
        };
      },
    );
  }
}
