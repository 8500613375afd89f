import type { CallPhases, JournalRecord, ModelResultRecord } from '../journal/records.js';
import type { Usage } from '../types.js';
import { reservedUsage, spendOf } from './spend.js';

/** One model call in a run report: what it cost and where its time went; never its text. */
export interface CallRunReport {
  callId: string;
  /** `pending` while no result is recorded. */
  outcome: 'success' | 'error' | 'pending';
  /** The error code of a failed call (`model_timeout`, `interrupted`, …). */
  code?: string;
  usage: Usage;
  /** True when `usage` is the call's reserved usage: none was recorded (interrupted or open). */
  reserved?: true;
  costMinor?: number;
  /** Admission to result, in ms; absent while pending. */
  durationMs?: number;
  /** Absent in records written before phases were recorded, and for interrupted calls. */
  phases?: CallPhases;
}

/** The sums of a run report; tokens and cost are counted as a durable budget counts them. */
export interface RunTotals {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costMinor: number;
  queuedMs: number;
  preparingMs: number;
  executingMs: number;
  /** From the first call's admission to the last call's end, wall clock. */
  wallMs: number;
}

/** What a run (a prompt's turn, a task) did with the model, read back from the journal (SCH-19). */
export interface TaskRunReport {
  calls: CallRunReport[];
  totals: RunTotals;
}

/**
 * The run report of `records` (one prompt's, one task's): every call in admission order with
 * its outcome, usage, cost, duration and phase times, and their totals. Pure, and built from
 * the journal alone, so it reads the same after a restart.
 */
export function runReportOf(records: readonly JournalRecord[]): TaskRunReport {
  const results = new Map<string, ModelResultRecord>();
  for (const record of records) if (record.type === 'model_result') results.set(record.callId, record);
  const spend = spendOf(records);
  const totals: RunTotals = {
    calls: spend.calls,
    inputTokens: spend.inputTokens,
    outputTokens: spend.outputTokens,
    costMinor: spend.costMinor,
    queuedMs: 0,
    preparingMs: 0,
    executingMs: 0,
    wallMs: 0,
  };
  let first = Infinity;
  let last = -Infinity;
  const calls: CallRunReport[] = [];
  for (const record of records) {
    if (record.type !== 'model_request') continue;
    const result = results.get(record.callId);
    const code = result?.error?.code;
    const reserved = result === undefined || code === 'interrupted';
    const call: CallRunReport = {
      callId: record.callId,
      outcome: result?.outcome ?? 'pending',
      usage: reserved ? reservedUsage(record.request) : (result.usage ?? { inputTokens: 0, outputTokens: 0 }),
    };
    if (code !== undefined) call.code = code;
    if (reserved) call.reserved = true;
    const start = Date.parse(record.at);
    if (Number.isFinite(start)) first = Math.min(first, start);
    if (result !== undefined) {
      if (result.costMinor !== undefined) call.costMinor = result.costMinor;
      call.durationMs = result.durationMs;
      if (Number.isFinite(start)) last = Math.max(last, start + result.durationMs);
      if (result.phases !== undefined) {
        call.phases = result.phases;
        totals.queuedMs += result.phases.queuedMs;
        totals.preparingMs += result.phases.preparingMs;
        totals.executingMs += result.phases.executingMs;
      }
    }
    calls.push(call);
  }
  if (last > first) totals.wallMs = Math.round(last - first);
  return { calls, totals };
}
