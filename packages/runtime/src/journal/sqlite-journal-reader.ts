import type Database from 'better-sqlite3';
import { openSqlite } from '../sqlite-connection.js';
import { JournalClosedError } from './journal-errors.js';
import { TEMPORARY_TASK_PREFIX, type JournalRecord } from './records.js';

/**
 * The journal's read side: its own read-only connection, so that queries never wait for the
 * writer thread. Reads see committed records, in commit order.
 */
export class SqliteJournalReader {
  private readonly db: Database.Database;
  private readonly selectByCall: Database.Statement<[string], string>;
  private readonly selectByTask: Database.Statement<[string, string], string>;
  private readonly selectBySession: Database.Statement<[string], string>;
  private readonly selectCount: Database.Statement<[], number>;

  /** Opens the existing, migrated file at `path`. */
  constructor(
    private readonly path: string,
    busyTimeoutMs: number,
  ) {
    this.db = openSqlite(path, busyTimeoutMs, { readonly: true, fileMustExist: true });
    try {
      const select = (column: string): Database.Statement<[string], string> =>
        this.db
          .prepare<[string], string>(`SELECT body FROM journal_records WHERE ${column} = ? ORDER BY seq`)
          .pluck();
      this.selectByCall = select('call_id');
      this.selectBySession = select('session_id');
      // A temporary task's records are not in the task index (see schema version 2): its id
      // names its only call, so they are found through the call index.
      this.selectByTask = this.db
        .prepare<[string, string], string>(
          `SELECT body FROM (
             SELECT seq, body FROM journal_records WHERE task_id = ? AND task_id <> 'tmp-' || call_id
             UNION ALL
             SELECT seq, body FROM journal_records WHERE call_id = ? AND task_id = 'tmp-' || call_id
           ) ORDER BY seq`,
        )
        .pluck();
      this.selectCount = this.db.prepare<[], number>('SELECT count(*) FROM journal_records').pluck();
    } catch (error) {
      this.db.close();
      throw error;
    }
  }

  recordsForCall(callId: string): JournalRecord[] {
    return this.read(this.selectByCall, callId);
  }

  recordsForTask(taskId: string): JournalRecord[] {
    this.checkReadable();
    const prefix = TEMPORARY_TASK_PREFIX;
    const callId = taskId.startsWith(prefix) ? taskId.slice(prefix.length) : '';
    return this.selectByTask.all(taskId, callId).map((body) => JSON.parse(body) as JournalRecord);
  }

  recordsForSession(sessionId: string): JournalRecord[] {
    return this.read(this.selectBySession, sessionId);
  }

  count(): number {
    this.checkReadable();
    return this.selectCount.get() ?? 0;
  }

  /** Reads after this throw {@link JournalClosedError}. */
  close(): void {
    this.db.close();
  }

  private read(statement: Database.Statement<[string], string>, key: string): JournalRecord[] {
    this.checkReadable();
    return statement.all(key).map((body) => JSON.parse(body) as JournalRecord);
  }

  private checkReadable(): void {
    if (!this.db.open) throw new JournalClosedError(this.path);
  }
}
