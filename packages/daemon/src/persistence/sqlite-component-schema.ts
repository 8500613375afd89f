import type Database from 'better-sqlite3';
import { SCHEMA_MIGRATIONS_TABLE, latestVersion, type Migration, type MigrationOutcome } from '@sluice/store';

/**
 * The schema of a component that keeps tables in the data directory's SQLite file beside the
 * journal (the session store, the budget store). The journal owns `PRAGMA user_version`, so a
 * component never reads or writes it and keeps its version in a shared bookkeeping table, one
 * row per component:
 *
 *   sluice_schema_migrations(component TEXT PRIMARY KEY, version INTEGER)
 */
export interface SqliteComponentSchema {
  /** Its row of `sluice_schema_migrations`. */
  readonly component: string;
  /** Oldest first. Released entries never change; new ones are appended. */
  readonly migrations: readonly Migration[];
  /** The error for a file whose recorded version is newer than this build's `known` one. */
  readonly tooNew: (path: string, found: number, known: number) => Error;
}

/**
 * Applies the component's migrations newer than its recorded version, all in one immediate
 * transaction: a concurrent opener (another process, or the journal migrating its own tables)
 * waits and then finds nothing left to do, and a failing step leaves the database as it was.
 * Throws the schema's `tooNew` error when the file was written by a newer build.
 */
export function migrateComponent(db: Database.Database, schema: SqliteComponentSchema): MigrationOutcome {
  const latest = latestVersion(schema.migrations);
  const run = db.transaction((): MigrationOutcome => {
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${SCHEMA_MIGRATIONS_TABLE} (
         component TEXT NOT NULL PRIMARY KEY,
         version INTEGER NOT NULL
       )`,
    );
    const from = recordedVersion(db, schema.component);
    if (from > latest) throw schema.tooNew(db.name, from, latest);
    for (const migration of schema.migrations) if (migration.version > from) db.exec(migration.sql);
    if (latest > from)
      db.prepare(
        `INSERT INTO ${SCHEMA_MIGRATIONS_TABLE} (component, version) VALUES (?, ?)
         ON CONFLICT (component) DO UPDATE SET version = excluded.version`,
      ).run(schema.component, latest);
    return { from, to: latest };
  });
  return run.immediate();
}

/** The component's recorded schema version; 0 when it has none yet. */
export function componentVersion(db: Database.Database, component: string): number {
  const exists = db
    .prepare<[string], number>(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`)
    .pluck()
    .get(SCHEMA_MIGRATIONS_TABLE);
  return exists ? recordedVersion(db, component) : 0;
}

function recordedVersion(db: Database.Database, component: string): number {
  const version = db
    .prepare<[string], number>(`SELECT version FROM ${SCHEMA_MIGRATIONS_TABLE} WHERE component = ?`)
    .pluck()
    .get(component);
  return version ?? 0;
}
