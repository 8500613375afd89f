import type { JournalRecord } from '@sluice/runtime';
import type { Sql, TransactionSql } from 'postgres';

/**
 * A batch of records on its way to one `INSERT … SELECT FROM jsonb_array_elements(…)`: their
 * JSON texts joined into one JSON array, so that the driver sends one parameter and escapes
 * nothing; the database parses it once and takes the indexed columns from each element.
 */
export interface JournalBatchText {
  /** The records' JSON texts, in append order. */
  bodies: string[];
  /** Each record's type and call id, to name a record the database refused. */
  keys: string[];
}

/** An empty batch, for appends to fill. */
export function emptyBatchText(): JournalBatchText {
  return { bodies: [], keys: [] };
}

/** Adds one record, serialised once, to the batch. */
export function pushRecord(batch: JournalBatchText, record: JournalRecord, body: string): void {
  batch.bodies.push(body);
  batch.keys.push(`${record.type} ${record.callId}`);
}

/** The batch as one JSON array text. */
export function batchJson(batch: JournalBatchText): string {
  return `[${batch.bodies.join(',')}]`;
}

/**
 * `INSERT … SELECT` of a batch (its JSON array text), the records written by `nodeId`; the
 * caller adds the conflict clause and, for live writes, the fence.
 */
export function insertRecords(sql: Sql | TransactionSql, nodeId: string, json: string) {
  return sql`INSERT INTO sluice_journal_records (node_id, type, call_id, task_id, session_id, turn_id, at, body)
    SELECT ${nodeId}, r->>'type', r->>'callId', r->>'taskId', r->>'sessionId', r->>'turnId', r->>'at', r
    FROM jsonb_array_elements(${json}::text::jsonb) AS r`;
}

/** Validates the indexed fields so one malformed record cannot fail the batch it would join. */
export function checkRecord(record: JournalRecord): void {
  if (typeof record !== 'object' || record === null)
    throw new TypeError(`journal record must be an object, got ${String(record)}`);
  if (!Number.isInteger(record.version))
    throw new TypeError(`journal record version must be an integer, got ${String(record.version)}`);
  if (record.type !== 'model_request' && record.type !== 'model_result')
    throw new TypeError(
      `journal record type must be model_request or model_result, got ${String((record as { type?: unknown }).type)}`,
    );
  for (const field of ['callId', 'taskId', 'at'] as const)
    if (typeof record[field] !== 'string')
      throw new TypeError(`journal record ${field} must be a string, got ${String(record[field])}`);
  for (const field of ['sessionId', 'turnId'] as const)
    if (record[field] !== undefined && typeof record[field] !== 'string')
      throw new TypeError(`journal record ${field} must be a string, got ${String(record[field])}`);
}
