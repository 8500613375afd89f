import { rethrowLater, type ErrorReporter } from '../report-error.js';
import type { GenerationRequest, GenerationStopReason, ToolCall, Usage } from '../types.js';

/**
 * The task id of a call made without a budget is this prefix and the call id. (The SQLite
 * journal's schema and queries spell it out in SQL, as its partial indexes require.)
 */
export const TEMPORARY_TASK_PREFIX = 'tmp-';

/** Correlation of a model call with the work that caused it. */
export interface CallCorrelation {
  taskId: string;
  sessionId?: string;
  turnId?: string;
}

/** The effective options of a call as recorded; `timeoutMs` is what the provider was told (SCH-8). */
export interface RecordedOptions {
  timeoutMs: number;
  provider: string;
  model: string;
  kind: 'complete' | 'stream';
  /** A fallback attempt: the call id of the client's call (its first attempt) it stands in for. */
  fallbackOf?: string;
}

/** Written when a call is accepted, before the provider may start (SCH-9). */
export interface ModelRequestRecord extends CallCorrelation {
  version: 1;
  type: 'model_request';
  callId: string;
  /** Wall-clock time of admission, ISO 8601. */
  at: string;
  request: GenerationRequest;
  options: RecordedOptions;
}

/**
 * How long a call spent in each scheduler phase before it ended, in whole ms: waiting for a slot,
 * holding it while its request was recorded, and running the provider (SCH-19 run reports).
 */
export interface CallPhases {
  queuedMs: number;
  preparingMs: number;
  executingMs: number;
}

/** Written when a call ends, before success is delivered (SCH-16). */
export interface ModelResultRecord extends CallCorrelation {
  version: 1;
  type: 'model_result';
  callId: string;
  at: string;
  outcome: 'success' | 'error';
  /** `tool_calls` when the model asked for tools (records before issue 18 never have it). */
  stopReason?: GenerationStopReason;
  usage?: Usage;
  /** Cost in integer minor currency units, when the runtime has a price. */
  costMinor?: number;
  /** The generated text of a successful call. */
  text?: string;
  /** The tool calls of a successful call that made any (absent in older records). */
  toolCalls?: ToolCall[];
  error?: { code: string; message: string };
  durationMs: number;
  /** Time per phase; absent in records before issue 21 and in `interrupted` results. */
  phases?: CallPhases;
}

/** Everything the journal stores. Records are versioned so old logs stay readable. */
export type JournalRecord = ModelRequestRecord | ModelResultRecord;

/** Hears once whether an append was confirmed: `error` is undefined when it was. */
export interface AppendListener {
  appended(error?: Error): void;
}

/**
 * Durable storage of model requests and results. An append is confirmed only once the record
 * is durable (committed); it fails when it cannot be.
 */
export interface Journal {
  /** Short name for evidence in errors (`sqlite`, `memory`, …). */
  readonly name: string;
  /**
   * Starts appending `record` and tells `listener` once, when it is confirmed or has failed —
   * possibly before `write` returns, when the journal confirms at once. Never throws. The
   * runtime uses this form: it costs no promise per record.
   */
  write(record: JournalRecord, listener: AppendListener): void;
  /** `write` as a promise: resolves once the record is confirmed, rejects when it cannot be. */
  append(record: JournalRecord): Promise<void>;
  /**
   * The committed records naming `sessionId`, oldest first — the read side hosts use to list a
   * session's (or prompt's) calls. Optional: a write-only journal has none.
   */
  recordsForSession?(sessionId: string): JournalRecord[] | Promise<JournalRecord[]>;
  /**
   * The committed records of task `taskId`, oldest first — what a durable budget's spend is
   * recovered from after a restart, and, with a journal shared by several daemons, what every
   * node reads the task's spend from. Optional: a write-only journal has none.
   */
  recordsForTask?(taskId: string): JournalRecord[] | Promise<JournalRecord[]>;
  /** Flush what was accepted, then release resources. Appends after close fail. */
  close(): Promise<void>;
}

/**
 * Tells `listener` how its append ended. One listener that throws must not keep the journal from
 * telling the others, so its exception goes to `report` instead of up the journal's stack.
 */
export function tell(
  listener: AppendListener,
  error: Error | undefined,
  report: ErrorReporter = rethrowLater,
): void {
  try {
    listener.appended(error);
  } catch (thrown) {
    report(thrown);
  }
}

/** {@link Journal.append} for journals that implement {@link Journal.write}. */
export function appendThroughWrite(journal: Pick<Journal, 'write'>, record: JournalRecord): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    journal.write(record, { appended: (error) => (error ? reject(error) : resolve()) });
  });
}
