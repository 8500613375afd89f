import type { ModelLimits, ModelSchedulerSnapshot } from '@sluice/protocol';
import { systemClock, type Clock } from '../clock.js';
import type { ErrorReporter } from '../report-error.js';
import { TaskBudget, validateBudgetLimits, type TaskBudgetLimits } from '../budget/task-budget.js';
import { costMicroOf, costOf, validatePricing, type Pricing } from '../budget/pricing.js';
import {
  CancelledError,
  ModelClosureFailure,
  ModelRuntimeError,
  ProviderError,
  RecordingError,
  RuntimeStoppedError,
  type RecordingEvidence,
} from '../errors.js';
import type {
  Journal,
  JournalRecord,
  ModelRequestRecord,
  ModelResultRecord,
  RecordedOptions,
} from '../journal/records.js';
import type { SchedulerConfig } from '../scheduler/config.js';
import { Scheduler, type SchedulerObserver } from '../scheduler/scheduler.js';
import type { GenerationRequest, ModelProvider, ModelResponse, ModelStreamEvent } from '../types.js';
import { CallIdGenerator } from '../ids.js';
import { isoTimestamp } from '../timestamp.js';
import { WallClock } from '../wall-clock.js';
import { jsonStringBytes } from '../scheduler/request-size.js';
import { LastStringBytes } from './last-string-bytes.js';
import { Call, type CallDriver, type Outcome } from './call.js';
import { countedOptionsBytes } from './counted-options.js';
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
  /** Gets what an observer hook throws; default {@link rethrowLater}. */
  reportError?: ErrorReporter;
  /** Wall clock for record timestamps and call ids, in epoch ms; default: derived from `clock`. */
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

const COMPLETE_BYTES = jsonStringBytes('complete', Infinity);
const STREAM_BYTES = jsonStringBytes('stream', Infinity);

/** The options of a call that passes none: shared, so that such a call allocates no object for them. */
const NO_OPTIONS: CallOptions = Object.freeze({});

const DEFAULT_TEMPORARY_BUDGET: TaskBudgetLimits = { maxCalls: 1 };

/** The latest time a `Date` can hold (ECMAScript: 8.64e15 ms after 1970). */
const MAX_DATE_MS = 8.64e15;

/**
 * The model gateway of SPEC SCH: every call passes the task budget, the one bounded
 * scheduler and the journal, in that order, around a provider. Admission is synchronous:
 * `complete` and `stream` throw typed errors before returning.
 */
export class ModelRuntime implements ModelGateway, CallDriver {
  readonly limits: Readonly<ModelLimits>;
  readonly provider: ModelProvider;
  readonly providerName: string;
  private readonly providerNameBytes: number;
  private readonly defaultModelBytes: number;
  readonly journal: Journal;
  private readonly scheduler: Scheduler;
  private readonly ids = new CallIdGenerator();
  private readonly clock: Clock;
  private readonly wallClockMs: (() => number) | undefined;
  private readonly wallClock = new WallClock();
  private readonly pricing: Pricing | undefined;
  private readonly temporaryBudgetLimits: Readonly<TaskBudgetLimits>;
  /** A temporary scope that can neither refuse its one call nor bound its time needs no object. */
  private readonly trivialTemporaryScope: boolean;
  /** A session's calls name the same session and turn one after another: their sizes are kept. */
  private readonly sessionIdBytes = new LastStringBytes();
  private readonly turnIdBytes = new LastStringBytes();
  private lastCompleteOptions: RecordedOptions | undefined = undefined;
  private lastStreamOptions: RecordedOptions | undefined = undefined;

  constructor(options: ModelRuntimeOptions) {
    if (!options.provider) throw new TypeError('provider is required');
    if (!options.journal) throw new TypeError('journal is required');
    this.provider = options.provider;
    this.providerName = options.provider.name;
    this.providerNameBytes = jsonStringBytes(this.providerName, Infinity);
    this.defaultModelBytes = jsonStringBytes(options.provider.defaultModel, Infinity);
    this.journal = options.journal;
    this.clock = options.clock ?? systemClock;
    this.scheduler = new Scheduler({
      ...options.scheduler,
      clock: this.clock,
      observer: options.observer,
      reportError: options.reportError,
    });
    this.limits = this.scheduler.limits;
    this.wallClockMs = options.wallClockMs;
    this.pricing = options.pricing && validatePricing(options.pricing);
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
    // The executor stores the settlers in the new call itself: a store into an object that
    // lives long (a shared holder, say) costs a write barrier each; the closure is compiled away.
    const answer = new Promise<ModelResponse>((resolve, reject) => call.settleWith(resolve, reject));
    this.recordRequest(call);
    return answer;
  }

  /** Streams an answer. Throws admission errors synchronously; `finished` comes only once recorded. */
  stream(request: GenerationRequest, options: CallOptions = NO_OPTIONS): ModelStream {
    const channel = new StreamChannel();
    const call = this.admit(request, options, channel);
    this.recordRequest(call);
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
    const wallMs = this.wallAt(now);
    const callId = this.ids.next(wallMs);
    let budget = options.budget;
    if (budget === undefined && !this.trivialTemporaryScope)
      budget = new TaskBudget(`tmp-${callId}`, this.temporaryBudgetLimits, this.clock);
    budget?.check();
    const call = new Call(
      callId,
      budget ? budget.taskId : `tmp-${callId}`,
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

  /** Starts appending the accepted call's request record, before the provider may start (SCH-9). */
  private recordRequest(call: Call): void {
    // Records are written whole, absent members as undefined (JSON leaves them out), so that
    // every record of a kind has one hidden class and the code building them stays optimized.
    const record: ModelRequestRecord = {
      version: 1,
      type: 'model_request',
      callId: call.callId,
      taskId: call.taskId,
      sessionId: call.sessionId,
      turnId: call.turnId,
      at: isoTimestamp(this.wallAt(call.admittedAt)),
      request: call.request,
      options: this.recordedOptions(call),
    };
    call.pendingAppends++;
    this.journal.write(record, call);
  }

  /**
   * The options `call` records. Calls mostly share them, and records are never changed once
   * written, so the last ones of each kind are frozen and handed out again.
   */
  private recordedOptions(call: Call): RecordedOptions {
    const { timeoutMs, model, kind } = call;
    const last = kind === 'complete' ? this.lastCompleteOptions : this.lastStreamOptions;
    if (last !== undefined && last.timeoutMs === timeoutMs && last.model === model) return last;
    const options: RecordedOptions = Object.freeze({ timeoutMs, provider: this.providerName, model, kind });
    if (kind === 'complete') this.lastCompleteOptions = options;
    else this.lastStreamOptions = options;
    return options;
  }

  /**
   * @internal Counts the options `call` records by arithmetic, from byte lengths known in
   * advance where they can be: the provider, the default model, the task (SCH-17).
   */
  optionsBytes(call: Call, timeoutMs: number): number {
    const { model, budget, sessionId, turnId } = call;
    return countedOptionsBytes(
      timeoutMs,
      this.providerNameBytes,
      model === this.provider.defaultModel ? this.defaultModelBytes : jsonStringBytes(model, Infinity),
      call.kind === 'complete' ? COMPLETE_BYTES : STREAM_BYTES,
      // A temporary task is named `tmp-<callId>`, and call ids are plain ASCII.
      budget ? budget.taskIdJsonBytes : call.callId.length + 6,
      sessionId === undefined ? undefined : this.sessionIdBytes.of(sessionId),
      turnId === undefined ? undefined : this.turnIdBytes.of(turnId),
    );
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
      answer = call.channel ? this.pump(call, call.channel) : this.provider.complete(call.request, call);
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
      call.requestEvidence = this.evidence(call, 'model_request', error);
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
      const evidence = this.evidence(call, 'model_result', error);
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
    const { outcome, failure } = call;
    if (call.requestEvidence) {
      const error =
        failure instanceof RecordingError
          ? failure
          : new RecordingError(call.requestEvidence, { cause: failure });
      return this.settle(call, error);
    }
    const record = this.resultRecord(call, outcome, failure, now);
    call.pendingAppends++;
    this.journal.write(record, call);
  }

  /** Settles the budget, frees the in-flight unit, then delivers. */
  private settle(call: Call, error: ModelRuntimeError | undefined): void {
    const { outcome } = call;
    call.failure = error; // the call's stop reason, with the outcome's
    call.budget?.settle(outcome?.usage, costMicroOf(outcome?.usage, this.pricing));
    this.scheduler.finish(call);
    call.deliver(error ? undefined : outcome, error);
  }

  /** Pulls the provider's stream only as fast as the consumer reads it. */
  private async pump(call: Call, channel: StreamChannel): Promise<Outcome> {
    const iterator = this.provider.stream(call.request, call)[Symbol.asyncIterator]();
    let text = '';
    try {
      for (;;) {
        await channel.demand(call);
        const step = await call.race(iterator.next());
        // A stream owes exactly one `finished`: one that ends without it was cut short, and
        // passing it off as a whole answer would record a truncated text as a success.
        if (step.done)
          throw new ProviderError(`${this.provider.name} ended its stream without finished`, false);
        const event = step.value;
        if (event.type === 'finished') {
          // Nothing more is pulled: close the provider's stream so that its cleanup runs.
          closeQuietly(iterator);
          return { text, stopReason: event.stopReason, usage: event.usage };
        }
        text += event.text;
        channel.deliver(event);
      }
    } catch (error) {
      closeQuietly(iterator);
      throw error;
    }
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

  private resultRecord(
    call: Call,
    outcome: Outcome | undefined,
    failure: ModelRuntimeError | undefined,
    now: number,
  ): ModelResultRecord {
    return {
      version: 1,
      type: 'model_result',
      callId: call.callId,
      taskId: call.taskId,
      sessionId: call.sessionId,
      at: isoTimestamp(this.wallAt(now)),
      outcome: outcome ? 'success' : 'error',
      durationMs: Math.round(now - call.admittedAt),
      stopReason: outcome?.stopReason,
      usage: outcome?.usage,
      costMinor: outcome && this.pricing ? costOf(outcome.usage, this.pricing) : undefined,
      text: outcome?.text,
      error: !outcome && failure ? { code: failure.code, message: failure.message } : undefined,
    };
  }

  /**
   * Epoch ms at the clock's `now`: the injected wall clock, else derived without a clock read —
   * the same for the same `now` within a second, so a call's id and its request record agree.
   */
  private wallAt(now: number): number {
    if (this.wallClockMs === undefined) return this.wallClock.at(now);
    // Every wall time of the runtime comes through here, so a broken injected clock is mended
    // here: before 1970 or not a number counts as 0, and past what a Date can hold as its end —
    // otherwise stamping the request record would throw after admission and strand the call.
    const epochMs = this.wallClockMs();
    return epochMs >= 0 ? Math.min(epochMs, MAX_DATE_MS) : 0;
  }

  private evidence(call: Call, record: JournalRecord['type'], error: unknown): RecordingEvidence {
    return {
      callId: call.callId,
      record,
      journal: this.journal.name,
      failedAt: isoTimestamp(this.wallAt(this.clock.now())),
      error: error instanceof Error ? error.message : String(error),
    };
  }
}

/**
 * Closes a provider's stream the runtime stops pulling, without waiting: a `return()` that
 * throws or rejects is the provider's trouble and never replaces the call's own outcome.
 */
function closeQuietly(iterator: AsyncIterator<unknown>): void {
  try {
    const closing = iterator.return?.();
    if (closing !== undefined) Promise.resolve(closing).catch(() => undefined);
  } catch {
    // ignored, as above
  }
}

/** True when a temporary budget with `limits` could neither refuse its one call nor bound its time. */
function isTrivialTemporaryScope(limits: Readonly<TaskBudgetLimits>): boolean {
  if (limits.maxActivityMs !== undefined) return false;
  return [limits.maxCalls, limits.maxInputTokens, limits.maxOutputTokens, limits.maxCostMinor].every(
    (limit) => limit === undefined || limit > 0,
  );
}
