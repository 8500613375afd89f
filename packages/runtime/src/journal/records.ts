import type { ModelStopReason } from '@sluice/protocol';
import type { GenerationRequest, Usage } from '../types.js';

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

/** Written when a call ends, before success is delivered (SCH-16). */
export interface ModelResultRecord extends CallCorrelation {
  version: 1;
  type: 'model_result';
  callId: string;
  at: string;
  outcome: 'success' | 'error';
  stopReason?: ModelStopReason;
  usage?: Usage;
  /** Cost in integer minor currency units, when the runtime has a price. */
  costMinor?: number;
  /** The generated text of a successful call. */
  text?: string;
  error?: { code: string; message: string };
  durationMs: number;
}

/** Everything the journal stores. Records are versioned so old logs stay readable. */
export type JournalRecord = ModelRequestRecord | ModelResultRecord;

/**
 * Durable storage of model requests and results. `append` resolves only once the record is
 * confirmed durable (committed); it rejects when it cannot be.
 */
export interface Journal {
  /** Short name for evidence in errors (`sqlite`, `memory`, …). */
  readonly name: string;
  append(record: JournalRecord): Promise<void>;
  /** Flush what was accepted, then release resources. Appends after close reject. */
  close(): Promise<void>;
}
