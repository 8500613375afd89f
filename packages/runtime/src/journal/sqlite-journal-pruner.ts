import type Database from 'better-sqlite3';
import { SETTLED_THROUGH } from './sqlite-reconcile.js';

/** What one {@link SqliteJournalPruner.pruneBatch} did. */
export interface PruneBatch {
  /** Records looked at. */
  scanned: number;
  /** Model calls deleted, each its request and its result. */
  deletedCalls: number;
  /** The seq to continue after. */
  lastSeq: number;
  /** True once the scan reached a record at or after the cutoff, or the end of the journal. */
  done: boolean;
}

interface ScannedRow {
  seq: number;
  type: string;
  call_id: string;
  task_id: string;
  at: string;
}

/**
 * Deletes model calls from a SQLite journal file through a connection of its own (not the
 * journal's writer thread): the calls older than a retention cutoff, in batches, and the calls
 * of one session (a purge). Only settled calls go: a request is deleted together with its
 * result, never alone, so the request of a call still running stays (SCH-9/SCH-15). Each batch
 * is one short immediate transaction; the journal's writer waits for it up to its busy timeout.
 */
export class SqliteJournalPruner {
  private readonly scan: Database.Statement<[number, number], ScannedRow>;
  private readonly deleteCall: Database.Statement<[string]>;
  private readonly deleteSessionCalls: Database.Statement<[string]>;
  private readonly clampSettledMark: Database.Statement<[string]>;
  private readonly prune: (cutoffMs: number, afterSeq: number, maxRows: number) => PruneBatch;
  private readonly purge: (sessionId: string) => number;

  /**
   * Prepares its statements on `db`, a read-write connection to a migrated journal file.
   * Retention keeps every call of a task `keepTask` names (a durable budget's calls are its
   * spend: deleting them would give the budget back).
   */
  constructor(
    db: Database.Database,
    private readonly keepTask: (taskId: string) => boolean = () => false,
  ) {
    this.scan = db.prepare(
      'SELECT seq, type, call_id, task_id, at FROM journal_records WHERE seq > ? ORDER BY seq LIMIT ?',
    );
    this.deleteCall = db.prepare('DELETE FROM journal_records WHERE call_id = ?');
    this.deleteSessionCalls = db.prepare(
      `DELETE FROM journal_records WHERE call_id IN (
         SELECT call_id FROM journal_records WHERE session_id = ? AND type = 'model_result')`,
    );
    // Without AUTOINCREMENT a deleted last seq is handed out again: the settled mark must not
    // stay above the last record, or a new call could count as settled (sqlite-reconcile.ts).
    this.clampSettledMark = db.prepare(
      `UPDATE journal_meta SET value = (SELECT coalesce(max(seq), 0) FROM journal_records)
       WHERE key = ? AND value > (SELECT coalesce(max(seq), 0) FROM journal_records)`,
    );
    this.prune = db.transaction((cutoffMs: number, afterSeq: number, maxRows: number) =>
      this.pruneRows(cutoffMs, afterSeq, maxRows),
    ).immediate;
    this.purge = db.transaction((sessionId: string) => {
      const deleted = this.deleteSessionCalls.run(sessionId).changes;
      if (deleted > 0) this.clampSettledMark.run(SETTLED_THROUGH);
      return deleted;
    }).immediate;
  }

  /**
   * Looks at up to `maxRows` records after `afterSeq`, oldest first, and deletes each call whose
   * result was recorded before `cutoffMs` (epoch ms). Stops at the first record at or after the
   * cutoff: records are in commit order, so what follows is (about) as new.
   */
  pruneBatch(cutoffMs: number, afterSeq: number, maxRows: number): PruneBatch {
    return this.prune(cutoffMs, afterSeq, maxRows);
  }

  /** Deletes the settled calls of one session; returns how many records went. */
  deleteSessionRecords(sessionId: string): number {
    return this.purge(sessionId);
  }

  private pruneRows(cutoffMs: number, afterSeq: number, maxRows: number): PruneBatch {
    const rows = this.scan.all(afterSeq, maxRows);
    let lastSeq = afterSeq;
    let deletedCalls = 0;
    let done = rows.length < maxRows;
    for (const row of rows) {
      const at = Date.parse(row.at);
      if (at >= cutoffMs) {
        done = true;
        break;
      }
      lastSeq = row.seq;
      // A request waits for its result, which deletes both: a running call's request stays.
      if (row.type === 'model_result' && at < cutoffMs && !this.keepTask(row.task_id))
        deletedCalls += this.deleteCall.run(row.call_id).changes > 0 ? 1 : 0;
    }
    if (deletedCalls > 0) this.clampSettledMark.run(SETTLED_THROUGH);
    return { scanned: rows.length, deletedCalls, lastSeq, done };
  }
}
