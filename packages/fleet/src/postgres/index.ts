// The PostgreSQL backend's public face: the CLI opens it with `openPostgresFleet`.
export {
  SessionOwnedByOtherNodeError,
  StoreClosedError,
  StoreLeaseLostError,
  StoreSchemaTooNewError,
  StoreUnreachableError,
  type PostgresStoreErrorCode,
} from './errors.js';
export type { PostgresFleetOptions } from './fleet-options.js';
export type { JournaledCall, PostgresJournalReader } from './journal-reader.js';
export type { PostgresJournalStats } from './journal-batch-writer.js';
export { STORE_SCHEMA_VERSION, migrateStore } from './migrations.js';
export type { NodeLease } from './node-lease.js';
export { openPostgresFleet, type PostgresFleet } from './postgres-fleet.js';
export type { PostgresBudgetStore, StoredBudget } from './postgres-budget-store.js';
export type { PostgresJournal } from './postgres-journal.js';
export type { PostgresSessionStore } from './postgres-session-store.js';
export type { PurgeVacuumMode } from './purge-vacuum.js';
export type { SettledNodes } from './reconcile.js';
export { parseStoreUrl, redactStoreUrl } from './store-url.js';
