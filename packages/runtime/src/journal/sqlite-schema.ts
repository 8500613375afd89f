import Database from 'better-sqlite3';

/** One forward-only schema step; `version` is the `PRAGMA user_version` once it has run. */
export interface JournalMigration {
  readonly version: number;
  readonly sql: string;
}

/** The journal's migrations, oldest first. Released entries never change; new ones are appended. */
export const JOURNAL_MIGRATIONS: readonly JournalMigration[] = [
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
];

/** The schema version this build writes and reads. */
export const JOURNAL_SCHEMA_VERSION = JOURNAL_MIGRATIONS[JOURNAL_MIGRATIONS.length - 1]?.version ?? 0;

/** What {@link migrateJournal} did: the version found and the version left. */
export interface MigrationOutcome {
  from: number;
  to: number;
}

/**
 * Applies the migrations newer than the database's `user_version`, all in one immediate
 * transaction, so a concurrent opener waits and then finds nothing left to do, and a failing
 * step leaves the database as it was.
 */
export function migrateJournal(
  db: Database.Database,
  migrations: readonly JournalMigration[] = JOURNAL_MIGRATIONS,
): MigrationOutcome {
  checkMigrationOrder(migrations);
  const latest = migrations[migrations.length - 1]?.version ?? 0;
  const run = db.transaction((): MigrationOutcome => {
    const from = userVersion(db);
    if (from > latest) {
      throw new Error(
        `Journal "${db.name}" has schema version ${from}, newer than the ${latest} this build knows`,
      );
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
export function initializeJournalFile(path: string, busyTimeoutMs: number): MigrationOutcome {
  const db = new Database(path);
  try {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new Error(`Journal "${path}" cannot use WAL mode (got ${String(mode)})`);
    return migrateJournal(db);
  } finally {
    db.close();
  }
}

function userVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

function checkMigrationOrder(migrations: readonly JournalMigration[]): void {
  let previous = 0;
  for (const { version } of migrations) {
    if (!Number.isInteger(version) || version <= previous) {
      throw new RangeError(
        `migration versions must be increasing positive integers, got ${version} after ${previous}`,
      );
    }
    previous = version;
  }
}
