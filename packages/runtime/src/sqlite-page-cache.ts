/**
 * The page cache one SQLite connection of the daemon may hold, in KiB: SQLite's own default.
 * better-sqlite3 builds SQLite with 16 MB (`SQLITE_DEFAULT_CACHE_SIZE=-16000`), which a
 * connection fills as it writes: the journal's writer, taking agents' ~80 KB requests, grew by
 * ~16 MiB, and so could every other connection. A connection appends or reads by key, so 2 MiB
 * holds the B-tree pages it uses again (docs/decisions/045-sqlite-page-caches.md).
 */
export const SQLITE_PAGE_CACHE_KIB = 2048;

/** Bounds `db`'s page cache to {@link SQLITE_PAGE_CACHE_KIB}; run once a connection is open. */
export function boundPageCache(db: { pragma(source: string): unknown }): void {
  db.pragma(`cache_size = -${SQLITE_PAGE_CACHE_KIB}`);
}
