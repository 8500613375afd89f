import type { JournalRecord } from './records.js';

/** Which records a journal read (`sluice journal`) shows; every field narrows, unset ones do not. */
export interface JournalFilter {
  sessionId?: string;
  /** The prompt a call was made for (the records' `turnId`); its results are found by call. */
  promptId?: string;
  /** A result's stop reason (`end_turn`, `tool_calls`, …) or error code (`model_timeout`, …). */
  code?: string;
  /** Records at or after this instant (ms since the epoch). */
  sinceMs?: number;
  /** Records before this instant. */
  untilMs?: number;
}

/** A journal record and its position in the journal (`seq`, increasing with each record written). */
export interface JournalEntry {
  seq: number;
  record: JournalRecord;
}
