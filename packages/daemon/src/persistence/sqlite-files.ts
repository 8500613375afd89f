import { SqliteJournal } from '@sluice/runtime';
import { JournalMaintenance } from './journal-maintenance.js';
import { SqliteBudgetStore } from './sqlite-budget-store.js';
import { SqliteSessionStore } from './sqlite-session-store.js';

/** The journal and the session store of one SQLite file, opened (and migrated) together. */
export interface SqliteFiles {
  journal: SqliteJournal;
  /** Deletes model calls from the journal: retention, and a purged session's calls. */
  maintenance: JournalMaintenance;
  /** Absent when the daemon was given a store of its own. */
  store: SqliteSessionStore | undefined;
  /** Durable budgets' definitions (their spend is in the journal). */
  budgets: SqliteBudgetStore;
}

/**
 * Opens the journal, then the session store, in the file at `path`. Loaded with `import()` by
 * {@link LazySqlitePersistence}, so SQLite is loaded only once something is to be recorded.
 */
export function openSqliteFiles(
  path: string,
  withStore: boolean,
  onBatchCommitted?: (records: number, durationMs: number) => void,
): SqliteFiles {
  // The daemon holds the data directory's lock: it is the file's one writer, so it may settle
  // the calls a killed daemon left open.
  const journal = new SqliteJournal({
    path,
    reconcileInterrupted: true,
    ...(onBatchCommitted === undefined ? {} : { onBatchCommitted }),
  });
  let maintenance: JournalMaintenance | undefined;
  let budgets: SqliteBudgetStore | undefined;
  try {
    maintenance = new JournalMaintenance(path);
    budgets = new SqliteBudgetStore(path);
    return {
      journal,
      maintenance,
      store: withStore ? new SqliteSessionStore({ path }) : undefined,
      budgets,
    };
  } catch (error) {
    budgets?.close();
    maintenance?.close();
    void journal.close().catch(() => {});
    throw error;
  }
}
