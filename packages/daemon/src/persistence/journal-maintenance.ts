import Database from 'better-sqlite3';
import { SqliteJournalPruner, type PruneBatch } from '@sluice/runtime';

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
    this.db = new Database(path, { fileMustExist: true });
    try {
      this.db.pragma(`busy_timeout = ${busyTimeoutMs}`);
      this.db.pragma('secure_delete = ON');
      this.pruner = new SqliteJournalPruner(this.db);
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

  close(): void {
    if (this.db.open) this.db.close();
  }
}
