// `@sluice/store`: the contract of every session store — the port the daemon's sessions layer
// calls, the rows both the SQLite store (daemon) and the PostgreSQL store (fleet) keep and their
// codec, the listing cursor, the history delta, and the schema migrations' order check.

export type {
  AcceptedPrompt,
  ConversationMessage,
  SessionListOptions,
  SessionListPage,
  SessionOwner,
  SessionRecord,
  SessionScope,
  SettledPrompt,
  StoredSessionSummary,
} from './session-record.js';
export type { AdmissionLedgerStore, SessionStore } from './session-store.js';
export {
  SESSION_COLUMNS,
  checkRecord,
  copyMessage,
  fromMessageRow,
  isConversationMessage,
  toMetadata,
  type MessageRow,
  type SessionRow,
} from './session-record-codec.js';
export {
  DEFAULT_SESSION_LIST_SIZE,
  MAX_SESSION_LIST_SIZE,
  compareListPosition,
  encodeListCursor,
  pageOfRows,
  parseListCursor,
  type ListPosition,
} from './session-listing.js';
export { boundedStart, conversationOverlap, messageBytes, sameMessage } from './conversation-delta.js';
export { ConversationCache } from './conversation-cache.js';
export {
  DeltaSessionStore,
  historyDelta,
  type DeltaStoreBounds,
  type HistoryDelta,
} from './delta-session-store.js';
export {
  NEWER_DATA_DIR_ADVICE,
  SCHEMA_MIGRATIONS_TABLE,
  SchemaTooNewError,
  latestVersion,
  type Migration,
  type MigrationOutcome,
} from './migrations.js';
export { PURGE_VACUUM_MODES, type PurgeVacuumMode } from './purge-vacuum.js';
