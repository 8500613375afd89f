import Database from 'better-sqlite3';
import { latestVersion, type Migration, type MigrationOutcome } from '@sluice/store';
import { openSqlite } from '../sqlite-connection.js';
import { JournalSchemaTooNewError } from './journal-errors.js';
import { markAllSettled, reconcileInterruptedCalls } from './sqlite-reconcile.js';

/**
 * The journal's migrations, oldest first; a step's `version` is the `PRAGMA user_version` once
 * it has run. Released entries never change; new ones are appended.
 */
export const JOURNAL_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE journal_records (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        version INTEGER NOT NULL,
        type TEXT NOT NULL,
        call_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        session_id TEXT,
        at TEXT NOT NULL,
        body TEXT NOT NULL
      );
      CREATE INDEX journal_records_call_id ON journal_records (call_id);
      CREATE INDEX journal_records_task_id ON journal_records (task_id);
      CREATE INDEX journal_records_session_id ON journal_records (session_id);
    `,
  },
  {
    // The write path stores only the JSON body: every other column is VIRTUAL, computed from it
    // on read or when an index needs it, so the writer binds one value per record and the table
    // holds no copy of the body's fields. Without AUTOINCREMENT, an insert no longer updates
    // sqlite_sequence. The task index skips a temporary task's records (task id
    // `tmp-<call id>`, one call per task): they are found through the call index instead, which
    // spares one index entry per record. The session index skips records without a session.
    version: 2,
    sql: `
      CREATE TABLE journal_records_v2 (
        seq INTEGER PRIMARY KEY,
        body TEXT NOT NULL,
        version INTEGER AS (json_extract(body, '$.version')) VIRTUAL,
        type TEXT AS (json_extract(body, '$.type')) VIRTUAL,
        call_id TEXT AS (json_extract(body, '$.callId')) VIRTUAL,
        task_id TEXT AS (json_extract(body, '$.taskId')) VIRTUAL,
        session_id TEXT AS (json_extract(body, '$.sessionId')) VIRTUAL,
        at TEXT AS (json_extract(body, '$.at')) VIRTUAL
      );
      INSERT INTO journal_records_v2 (seq, body) SELECT seq, body FROM journal_records ORDER BY seq;
      DROP TABLE journal_records;
      DELETE FROM sqlite_sequence WHERE name = 'journal_records';
      ALTER TABLE journal_records_v2 RENAME TO journal_records;
      CREATE INDEX journal_records_call_id ON journal_records (call_id);
      CREATE INDEX journal_records_task_id ON journal_records (task_id)
        WHERE task_id <> 'tmp-' || call_id;
      CREATE INDEX journal_records_session_id ON journal_records (session_id)
        WHERE session_id IS NOT NULL;
    `,
  },
  {
    // Small facts about the file itself; `settled_through` is the seq up to which every
    // recorded request has its result, so start-up looks for interrupted calls only after it.
    version: 3,
    sql: `CREATE TABLE journal_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;`,
  },
];

/** The schema version this build writes and reads. */
export const JOURNAL_SCHEMA_VERSION = latestVersion(JOURNAL_MIGRATIONS);

/**
 * Applies the migrations newer than the database's `user_version`, all in one immediate
 * transaction, so a concurrent opener waits and then finds nothing left to do, and a failing
 * step leaves the database as it was.
 */
export function migrateJournal(
  db: Database.Database,
  migrations: readonly Migration[] = JOURNAL_MIGRATIONS,
): MigrationOutcome {
  const latest = latestVersion(migrations);
  // A current file needs no write lock: another process writing it must not stall this open.
  const current = userVersion(db);
  if (current === latest) return { from: current, to: current };
  const run = db.transaction((): MigrationOutcome => {
    const from = userVersion(db);
    if (from > latest) {
      throw new JournalSchemaTooNewError(db.name, from, latest);
    }
    for (const migration of migrations) {
      if (migration.version <= from) continue;
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    }
    return { from, to: userVersion(db) };
  });
  return run.immediate();
}

/**
 * Opens the journal file read-write on the calling thread, switches it to WAL and migrates
 * it, then closes the connection. Runs synchronously, before any writer starts.
 */
export function initializeJournalFile(
  path: string,
  busyTimeoutMs: number,
  reconcile: boolean = false,
  wallNowMs: () => number = Date.now,
): JournalOpening {
  const db = openSqlite(path, busyTimeoutMs);
  try {
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new Error(`Journal "${path}" cannot use WAL mode (got ${String(mode)})`);
    const migration = migrateJournal(db);
    return { migration, interrupted: reconcile ? reconcileInterruptedCalls(db, wallNowMs()) : 0 };
  } finally {
    db.close();
  }
}

/** Marks every record of the file settled, once its journal closed with no call open. */
export function markFileSettled(path: string): void {
  const db = new Database(path);
  try {
    markAllSettled(db);
  } finally {
    db.close();
  }
}

/** What opening a journal file did: the migration, and the calls it found interrupted. */
export interface JournalOpening {
  migration: MigrationOutcome;
  /** Requests without a result, left by a daemon that was killed; each got an `interrupted` result. */
  interrupted: number;
}

function userVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}
