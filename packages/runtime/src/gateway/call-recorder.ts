import type { Clock } from '../clock.js';
import { costOf, type Pricing } from '../budget/pricing.js';
import type { RecordingEvidence } from '../errors.js';
import {
  TEMPORARY_TASK_PREFIX,
  type Journal,
  type JournalRecord,
  type ModelResultRecord,
  type RecordedOptions,
} from '../journal/records.js';
import { jsonStringBytes } from '../scheduler/request-size.js';
import { isoTimestamp } from '../timestamp.js';
import type { ModelProvider } from '../types.js';
import { WallClock } from '../wall-clock.js';
import type { Call } from './call.js';
import { countedOptionsBytes } from './counted-options.js';
import { LastStringBytes } from './last-string-bytes.js';

const COMPLETE_BYTES = jsonStringBytes('complete', Infinity);
const STREAM_BYTES = jsonStringBytes('stream', Infinity);

/** The latest time a `Date` can hold (ECMAScript: 8.64e15 ms after 1970). */
const MAX_DATE_MS = 8.64e15;

/**
 * What the journal learns of a runtime's calls: a call's recorded options and their size
 * (SCH-17), its `ModelResult` record, the evidence of a failed append, and the wall time of
 * records and ids. (`ModelRuntime` writes the request record itself, at admission.)
 */
export class CallRecorder {
  private readonly providerName: string;
  private readonly providerNameBytes: number;
  private readonly defaultModel: string;
  private readonly defaultModelBytes: number;
  private readonly wallClock = new WallClock();
  /** A session's calls name the same session and turn one after another: their sizes are kept. */
  private readonly sessionIdBytes = new LastStringBytes();
  private readonly turnIdBytes = new LastStringBytes();
  private lastCompleteOptions: RecordedOptions | undefined = undefined;
  private lastStreamOptions: RecordedOptions | undefined = undefined;

  constructor(
    readonly journal: Journal,
    provider: ModelProvider,
    private readonly clock: Clock,
    private readonly wallClockMs: (() => number) | undefined,
    private readonly pricing: Pricing | undefined,
  ) {
    this.providerName = provider.name;
    this.providerNameBytes = jsonStringBytes(provider.name, Infinity);
    this.defaultModel = provider.defaultModel;
    this.defaultModelBytes = jsonStringBytes(provider.defaultModel, Infinity);
  }

  /** Starts appending the result record of the call's outcome or failure, at `now`. */
  writeResult(call: Call, now: number): void {
    const { outcome, failure } = call;
    const record: ModelResultRecord = {
      version: 1,
      type: 'model_result',
      callId: call.callId,
      taskId: call.taskId,
      sessionId: call.sessionId,
      at: isoTimestamp(this.wallAt(now)),
      outcome: outcome ? 'success' : 'error',
      durationMs: Math.round(now - call.admittedAt),
      phases: call.phaseTimes(now),
      stopReason: outcome?.stopReason,
      usage: outcome?.usage,
      costMinor: outcome && this.pricing ? costOf(outcome.usage, this.pricing) : undefined,
      text: outcome?.text,
      toolCalls: outcome?.toolCalls,
      error: !outcome && failure ? { code: failure.code, message: failure.message } : undefined,
    };
    call.pendingAppends++;
    this.journal.write(record, call);
  }

  /** What a failed append of `call`'s `record` leaves as evidence. */
  evidence(call: Call, record: JournalRecord['type'], error: unknown): RecordingEvidence {
    return {
      callId: call.callId,
      record,
      journal: this.journal.name,
      failedAt: isoTimestamp(this.wallAt(this.clock.now())),
      error: error instanceof Error ? error.message : String(error),
    };
  }

  /**
   * Counts the options `call` records with `timeoutMs` by arithmetic, from byte lengths known
   * in advance where they can be: the provider, the default model, the task (SCH-17).
   */
  optionsBytes(call: Call, timeoutMs: number): number {
    const { model, budget, sessionId, turnId, fallbackOf } = call;
    return countedOptionsBytes(
      timeoutMs,
      this.providerNameBytes,
      model === this.defaultModel ? this.defaultModelBytes : jsonStringBytes(model, Infinity),
      call.kind === 'complete' ? COMPLETE_BYTES : STREAM_BYTES,
      // A temporary task's id is the prefix and the call id, all plain ASCII, within quotes.
      budget ? budget.taskIdJsonBytes : TEMPORARY_TASK_PREFIX.length + call.callId.length + 2,
      sessionId === undefined ? undefined : this.sessionIdBytes.of(sessionId),
      turnId === undefined ? undefined : this.turnIdBytes.of(turnId),
      fallbackOf === undefined ? undefined : jsonStringBytes(fallbackOf, Infinity),
    );
  }

  /**
   * Epoch ms at the clock's `now`: the injected wall clock, else derived without a clock read —
   * the same for the same `now` within a second, so a call's id and its request record agree.
   */
  wallAt(now: number): number {
    if (this.wallClockMs === undefined) return this.wallClock.at(now);
    // Every wall time of the runtime comes through here, so a broken injected clock is mended
    // here: before 1970 or not a number counts as 0, and past what a Date can hold as its end —
    // otherwise stamping the request record would throw after admission and strand the call.
    const epochMs = this.wallClockMs();
    return epochMs >= 0 ? Math.min(epochMs, MAX_DATE_MS) : 0;
  }

  /**
   * The options `call`'s request record holds. Calls mostly share them, and records are never
   * changed once written, so the last ones of each kind are frozen and handed out again.
   */
  recordedOptions(call: Call): RecordedOptions {
    const { timeoutMs, model, kind, fallbackOf } = call;
    // A fallback attempt names the call it stands in for: its options are its own.
    if (fallbackOf !== undefined)
      return Object.freeze({ timeoutMs, provider: this.providerName, model, kind, fallbackOf });
    const last = kind === 'complete' ? this.lastCompleteOptions : this.lastStreamOptions;
    if (last !== undefined && last.timeoutMs === timeoutMs && last.model === model) return last;
    const options: RecordedOptions = Object.freeze({ timeoutMs, provider: this.providerName, model, kind });
    if (kind === 'complete') this.lastCompleteOptions = options;
    else this.lastStreamOptions = options;
    return options;
  }
}
