import type Database from 'better-sqlite3';
import { SessionStoreSchemaTooNewError } from './errors.js';

/**
 * Schema of the session store. It lives in the same SQLite file as the model-call journal,
 * which owns `PRAGMA user_version`; so the store never reads or writes `user_version` and keeps
 * its own version in a shared bookkeeping table, one row per component:
 *
 *   sluice_schema_migrations(component TEXT PRIMARY KEY, version INTEGER)
 *
 * Any other component that moves into this file later adds its own row. Every table of the
 * store is prefixed `sluice_session` so that it cannot collide with the journal's tables.
 */

/** One forward-only schema step; `version` is the component's recorded version once it has run. */
export interface SessionStoreMigration {
  readonly version: number;
  readonly sql: string;
}

/** The row of `sluice_schema_migrations` that belongs to the session store. */
export const SESSION_STORE_COMPONENT = 'daemon.sessions';

/** The bookkeeping table shared by every component that keeps tables in the journal's file. */
export const SCHEMA_MIGRATIONS_TABLE = 'sluice_schema_migrations';

/** The store's migrations, oldest first. Released entries never change; new ones are appended. */
export const SESSION_STORE_MIGRATIONS: readonly SessionStoreMigration[] = [
  {
    // One metadata row per session; its messages are rows of their own, numbered by a
    // per-session `seq`. The stored messages are always the contiguous range
    // [first_seq, next_seq): a turn appends at next_seq, trimming deletes from first_seq.
    // `revision` counts saves (it tells a cached copy of the conversation from a stale one);
    // `saved_order` is a store-wide counter that orders sessions by their last save, for the
    // eviction of the least recently saved session beyond `maxSessions`.
    version: 1,
    sql: `
      CREATE TABLE sluice_sessions (
        session_id TEXT NOT NULL PRIMARY KEY,
        workspace_cwd TEXT NOT NULL,
        cwd TEXT NOT NULL,
        scope TEXT NOT NULL CHECK (scope IN ('single', 'thread')),
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        display_name TEXT,
        forked_from_session_id TEXT,
        first_seq INTEGER NOT NULL,
        next_seq INTEGER NOT NULL,
        revision INTEGER NOT NULL,
        saved_order INTEGER NOT NULL
      );
      CREATE INDEX sluice_sessions_workspace ON sluice_sessions (workspace_cwd, created_at, session_id);
      CREATE INDEX sluice_sessions_saved_order ON sluice_sessions (saved_order);
      CREATE TABLE sluice_session_messages (
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
        content TEXT NOT NULL,
        name TEXT,
        tool_call_id TEXT,
        PRIMARY KEY (session_id, seq)
      );
    `,
  },
  {
    // The admission ledger: prompts answered 202 that have not ended. A restarted daemon ends
    // each with turn_error daemon_restarted when its session is loaded (issue 19 item 8).
    version: 2,
    sql: `
      CREATE TABLE sluice_session_accepted_prompts (
        session_id TEXT NOT NULL,
        prompt_id TEXT NOT NULL,
        accepted_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, prompt_id)
      ) WITHOUT ROWID;
    `,
  },
];

/** The schema version of the session store this build writes and reads. */
export const SESSION_STORE_SCHEMA_VERSION =
  SESSION_STORE_MIGRATIONS[SESSION_STORE_MIGRATIONS.length - 1]?.version ?? 0;

/** What {@link migrateSessionStore} did: the version found and the version left. */
export interface SessionStoreMigrationOutcome {
  from: number;
  to: number;
}

/**
 * Applies the migrations newer than the store's recorded version, all in one immediate
 * transaction: a concurrent opener (another process, or the journal migrating its own tables)
 * waits and then finds nothing left to do, and a failing step leaves the database as it was.
 * Throws {@link SessionStoreSchemaTooNewError} when the file was written by a newer build.
 */
export function migrateSessionStore(
  db: Database.Database,
  migrations: readonly SessionStoreMigration[] = SESSION_STORE_MIGRATIONS,
): SessionStoreMigrationOutcome {
  checkMigrationOrder(migrations);
  const latest = migrations[migrations.length - 1]?.version ?? 0;
  const run = db.transaction((): SessionStoreMigrationOutcome => {
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${SCHEMA_MIGRATIONS_TABLE} (
         component TEXT NOT NULL PRIMARY KEY,
         version INTEGER NOT NULL
       )`,
    );
    const from = recordedVersion(db);
    if (from > latest) throw new SessionStoreSchemaTooNewError(db.name, from, latest);
    for (const migration of migrations) {
      if (migration.version <= from) continue;
      db.exec(migration.sql);
    }
    if (latest > from)
      db.prepare(
        `INSERT INTO ${SCHEMA_MIGRATIONS_TABLE} (component, version) VALUES (?, ?)
         ON CONFLICT (component) DO UPDATE SET version = excluded.version`,
      ).run(SESSION_STORE_COMPONENT, latest);
    return { from, to: latest };
  });
  return run.immediate();
}

/** The session store's recorded schema version; 0 when it has none yet. */
export function sessionStoreSchemaVersion(db: Database.Database): number {
  const exists = db
    .prepare<[string], number>(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`)
    .pluck()
    .get(SCHEMA_MIGRATIONS_TABLE);
  return exists ? recordedVersion(db) : 0;
}

function recordedVersion(db: Database.Database): number {
  const version = db
    .prepare<[string], number>(`SELECT version FROM ${SCHEMA_MIGRATIONS_TABLE} WHERE component = ?`)
    .pluck()
    .get(SESSION_STORE_COMPONENT);
  return version ?? 0;
}

function checkMigrationOrder(migrations: readonly SessionStoreMigration[]): void {
  let previous = 0;
  for (const { version } of migrations) {
    if (!Number.isInteger(version) || version <= previous)
      throw new RangeError(
        `migration versions must be increasing positive integers, got ${version} after ${previous}`,
      );
    previous = version;
  }
}
