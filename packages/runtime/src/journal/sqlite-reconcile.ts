import type Database from 'better-sqlite3';
import { isoTimestamp } from '../timestamp.js';
import type { ModelResultRecord } from './records.js';

/** The `journal_meta` key of the seq up to which every request has its result. */
export const SETTLED_THROUGH = 'settled_through';

/** What an interrupted call's result says: the call may have reached the provider, and was not re-run. */
export const INTERRUPTED_MESSAGE =
  'The daemon stopped before this call ended; it may have reached the provider and was not re-run';

/**
 * Gives every `model_request` without a `model_result` — a call of a daemon that was killed —
 * a result with error code `interrupted`, and never runs it again (SCH-15: the request was
 * recorded, so the provider may have been called). Only records after the `settled_through`
 * mark are read, so a file whose last daemon stopped cleanly costs two small queries. Runs in
 * one immediate transaction before any writer starts; the data directory's lock ensures no
 * other daemon is writing the file. Returns how many calls it marked.
 */
export function reconcileInterruptedCalls(db: Database.Database, wallNowMs: number): number {
  // A settled file needs no write lock: another process writing it must not stall this open.
  if (lastSeq(db) <= settledThrough(db)) return 0;
  const run = db.transaction((): number => {
    const through = settledThrough(db);
    const last = lastSeq(db);
    if (last <= through) return 0;
    const open = openRequestsAfter(db, through);
    const insert = db.prepare('INSERT INTO journal_records (body) VALUES (?)');
    const at = isoTimestamp(wallNowMs);
    for (const request of open.values())
      insert.run(JSON.stringify(interruptedResult(request, at, wallNowMs)));
    setSettledThrough(db, lastSeq(db));
    return open.size;
  });
  return run.immediate();
}

/**
 * Moves the settled mark to the last record, once a journal closes with no call open: the next
 * start-up then has nothing to read.
 */
export function markAllSettled(db: Database.Database): void {
  setSettledThrough(db, lastSeq(db));
}

function openRequestsAfter(db: Database.Database, through: number): Map<string, OpenCallRequest> {
  const rows = db
    .prepare(
      `SELECT type, call_id AS callId, task_id AS taskId, session_id AS sessionId,
              json_extract(body, '$.turnId') AS turnId, at
         FROM journal_records WHERE seq > ? ORDER BY seq`,
    )
    .iterate(through) as IterableIterator<OpenCallRequest & { type: string }>;
  const open = new Map<string, OpenCallRequest>();
  for (const row of rows) {
    if (row.type === 'model_request') open.set(row.callId, row);
    else if (row.type === 'model_result') open.delete(row.callId);
  }
  return open;
}

/** The request of a call left without a result, as a journal read finds it. */
export interface OpenCallRequest {
  callId: string;
  taskId: string;
  sessionId: string | null;
  turnId: string | null;
  /** The request's `at` (ISO 8601). */
  at: string;
}

/**
 * The `interrupted` result a call left open by a dead daemon gets (SCH-15: it may have reached
 * the provider, so it is never re-run), at `at` (wall-clock `wallNowMs`). Shared by every
 * journal that settles such calls (SQLite here, PostgreSQL in the fleet package).
 */
export function interruptedResult(
  request: OpenCallRequest,
  at: string,
  wallNowMs: number,
): ModelResultRecord {
  const admitted = Date.parse(request.at);
  const record: ModelResultRecord = {
    version: 1,
    type: 'model_result',
    callId: request.callId,
    taskId: request.taskId,
    at,
    outcome: 'error',
    error: { code: 'interrupted', message: INTERRUPTED_MESSAGE },
    durationMs: Number.isFinite(admitted) ? Math.max(0, wallNowMs - admitted) : 0,
  };
  if (request.sessionId !== null) record.sessionId = request.sessionId;
  if (request.turnId !== null) record.turnId = request.turnId;
  return record;
}

function settledThrough(db: Database.Database): number {
  const row = db.prepare('SELECT value FROM journal_meta WHERE key = ?').get(SETTLED_THROUGH) as
    { value: number } | undefined;
  return row?.value ?? 0;
}

function lastSeq(db: Database.Database): number {
  const row = db.prepare('SELECT max(seq) AS seq FROM journal_records').get() as { seq: number | null };
  return row.seq ?? 0;
}

function setSettledThrough(db: Database.Database, seq: number): void {
  db.prepare(
    'INSERT INTO journal_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
  ).run(SETTLED_THROUGH, seq);
}
