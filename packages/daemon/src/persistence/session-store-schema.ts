import type Database from 'better-sqlite3';
import { latestVersion, type Migration, type MigrationOutcome } from '@sluice/store';
import { SessionStoreSchemaTooNewError } from './errors.js';
import { componentVersion, migrateComponent } from './sqlite-component-schema.js';

// Schema of the session store. It lives in the same SQLite file as the model-call journal, as a
// component with its own version (`SqliteComponentSchema`). Every table of the store is
// prefixed `sluice_session` so that it cannot collide with the journal's tables.

/** The row of `sluice_schema_migrations` that belongs to the session store. */
export const SESSION_STORE_COMPONENT = 'daemon.sessions';

/** The store's migrations, oldest first. Released entries never change; new ones are appended. */
export const SESSION_STORE_MIGRATIONS: readonly Migration[] = [
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
  {
    // A session's catalogue model (issue 29 item 4); NULL for the default, as for every
    // session stored before sessions picked a model.
    version: 3,
    sql: `ALTER TABLE sluice_sessions ADD COLUMN model TEXT;`,
  },
];

/** The schema version of the session store this build writes and reads. */
export const SESSION_STORE_SCHEMA_VERSION = latestVersion(SESSION_STORE_MIGRATIONS);

/**
 * Applies the migrations newer than the store's recorded version, in one immediate transaction
 * (`migrateComponent`). Throws {@link SessionStoreSchemaTooNewError} when the file was written by
 * a newer build.
 */
export function migrateSessionStore(
  db: Database.Database,
  migrations: readonly Migration[] = SESSION_STORE_MIGRATIONS,
): MigrationOutcome {
  return migrateComponent(db, {
    component: SESSION_STORE_COMPONENT,
    migrations,
    tooNew: (path, found, known) => new SessionStoreSchemaTooNewError(path, found, known),
  });
}

/** The session store's recorded schema version; 0 when it has none yet. */
export function sessionStoreSchemaVersion(db: Database.Database): number {
  return componentVersion(db, SESSION_STORE_COMPONENT);
}
