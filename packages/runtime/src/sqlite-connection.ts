import Database from 'better-sqlite3';

/**
 * The page cache one SQLite connection of the daemon may hold, in KiB: SQLite's own default.
 * better-sqlite3 builds SQLite with 16 MB (`SQLITE_DEFAULT_CACHE_SIZE=-16000`), which a
 * connection fills as it writes: the journal's writer, taking agents' ~80 KB requests, grew by
 * ~16 MiB, and so could every other connection. A connection appends or reads by key, so 2 MiB
 * holds the B-tree pages it uses again (docs/decisions/045-sqlite-page-caches.md).
 */
export const SQLITE_PAGE_CACHE_KIB = 2048;

/**
 * Opens a connection of the daemon to the database at `path` (`options` as better-sqlite3's):
 * it waits up to `busyTimeoutMs` for another connection's lock and holds at most
 * {@link SQLITE_PAGE_CACHE_KIB} of pages. Closed again if setting either fails. The journal's
 * writer thread, which cannot import this module from the bundle, gets the bound with its
 * settings.
 */
export function openSqlite(
  path: string,
  busyTimeoutMs: number,
  options?: Database.Options,
): Database.Database {
  const db = new Database(path, options);
  try {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    db.pragma(`cache_size = -${SQLITE_PAGE_CACHE_KIB}`);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}
