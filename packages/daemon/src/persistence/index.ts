// The SQLite store and its schema are not exported here: they load lazily with the database
// file (sqlite-files.ts, docs/decisions/011), and whatever this index exports loads at start-up.
export {
  InvalidCursorError,
  SessionStoreClosedError,
  SessionStoreError,
  SessionStoreSchemaTooNewError,
  type SessionStoreErrorCode,
} from './errors.js';
export { JOURNAL_FILE, prepareDataDir } from './data-dir.js';
export { LOCK_FILE, PID_FILE, lockDataDir } from './data-dir-lock.js';
export { LazySqlitePersistence } from './lazy-sqlite-persistence.js';
export { JournalRetention, type JournalRetentionOptions } from './journal-retention.js';
