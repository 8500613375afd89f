import type Database from 'better-sqlite3';
import { openSqlite, SqliteJournalPruner, type PruneBatch } from '@sluice/runtime';

/**
 * The daemon's own connection to the journal's file for deleting model calls: retention
 * batches and a purged session's calls. A connection apart from the journal's writer thread, so
 * that deleting never queues behind appends; `secure_delete` overwrites what it deletes, so a
 * purged prompt's text does not linger in free pages of the file.
 */
export class JournalMaintenance {
  private readonly db: Database.Database;
  private readonly pruner: SqliteJournalPruner;

  /** Opens the (already migrated) journal file at `path`. */
  constructor(path: string, busyTimeoutMs = 5_000) {
    this.db = openSqlite(path, busyTimeoutMs, { fileMustExist: true });
    try {
      this.db.pragma('secure_delete = ON');
      this.pruner = new SqliteJournalPruner(this.db, durableBudgetTasks(this.db));
    } catch (error) {
      this.db.close();
      throw error;
    }
  }

  /** One retention batch (see {@link SqliteJournalPruner.pruneBatch}). */
  pruneBatch(cutoffMs: number, afterSeq: number, maxRows: number): PruneBatch {
    return this.pruner.pruneBatch(cutoffMs, afterSeq, maxRows);
  }

  /** Deletes the settled calls of a purged session; returns how many records went. */
  deleteSessionRecords(sessionId: string): number {
    return this.pruner.deleteSessionRecords(sessionId);
  }

  /**
   * Copies the write-ahead log into the file and truncates it to nothing, so that text deleted
   * with `secure_delete` is left in neither: the log still holds the pages as they were before
   * the delete. Waits (busy timeout) for the writer and for readers on older snapshots; throws
   * when it could not finish.
   */
  truncateWal(): void {
    const [result] = this.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number; log: number }[];
    if (result !== undefined && result.busy !== 0)
      throw new Error('the journal file is busy: its write-ahead log could not be truncated');
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/**
 * Whether a task id names a durable budget (`sluice_budgets`, in the same file): retention keeps
 * its calls, which are its spend. A call without a budget (`tmp-…`) is never one.
 */
function durableBudgetTasks(db: Database.Database): (taskId: string) => boolean {
  let lookup: Database.Statement<[string], number> | undefined;
  return (taskId) => {
    if (taskId.startsWith('tmp-')) return false;
    try {
      lookup ??= db.prepare<[string], number>('SELECT 1 FROM sluice_budgets WHERE budget_id = ?').pluck();
    } catch {
      return false; // no budget table yet: no durable budget either
    }
    return lookup.get(taskId) !== undefined;
  };
}
