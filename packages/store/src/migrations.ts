import { SluiceError } from '@sluice/protocol';

// The schema migrations of every store: the SQLite journal (`PRAGMA user_version`), the SQLite
// session store and the PostgreSQL backend (a row each in `sluice_schema_migrations`).

/** One forward-only schema step; `version` is the recorded version once it has run. */
export interface Migration {
  readonly version: number;
  readonly sql: string;
}

/** What a migration did: the version found and the version left. */
export interface MigrationOutcome {
  from: number;
  to: number;
}

/** The bookkeeping table of the stores that keep their version in a row (one per component). */
export const SCHEMA_MIGRATIONS_TABLE = 'sluice_schema_migrations';

/**
 * The version `migrations` (oldest first) leave a schema at; 0 for none. Throws a `RangeError`
 * unless their versions are increasing positive integers, before anything runs.
 */
export function latestVersion(migrations: readonly Migration[]): number {
  let previous = 0;
  for (const { version } of migrations) {
    if (!Number.isInteger(version) || version <= previous)
      throw new RangeError(
        `migration versions must be increasing positive integers, got ${version} after ${previous}`,
      );
    previous = version;
  }
  return previous;
}

/** The advice of a {@link SchemaTooNewError} about a file of the daemon's data directory. */
export const NEWER_DATA_DIR_ADVICE =
  'it was written by a newer Sluice; run that one, or start this one with another --data-dir';

/**
 * A database whose recorded schema version is newer than the one this build knows: it was
 * written by a newer Sluice. Nothing was changed; the store refuses to open rather than guess.
 */
export abstract class SchemaTooNewError<Code extends string> extends SluiceError<Code> {
  readonly retryable = false;

  /** `what` names the store in the message (`Journal`), `advice` says what to do instead. */
  constructor(
    readonly path: string,
    readonly found: number,
    readonly known: number,
    what: string,
    advice: string,
  ) {
    super(
      `${what} "${path}" has schema version ${found}, newer than the ${known} this build knows: ${advice}`,
    );
  }
}
