import {
  JournalClosedError,
  type AppendListener,
  type Journal,
  type JournalRecord,
  type PruneBatch,
} from '@sluice/runtime';
import type {
  AcceptedPrompt,
  SessionListOptions,
  SessionRecord,
  SessionStore,
  SettledPrompt,
} from '../sessions/index.js';
import type { BudgetStore } from '../budgets/index.js';
import { SessionStoreClosedError, SessionStoreSchemaTooNewError } from './errors.js';
import type { SqliteFiles } from './sqlite-files.js';

/**
 * The daemon's journal and session store in the data directory's SQLite file, opened on first
 * use: the first model call recorded, session saved or session loaded loads SQLite, opens the
 * file and migrates it (docs/decisions/011). Until then the daemon has neither loaded SQLite
 * nor touched the file, so answering `/capabilities` or `/health` right after start waits for
 * none of it. The directory is checked at start-up instead (`prepareDataDir`).
 *
 * Calls keep their order across the opening: those made while the file opens run, in order,
 * before any made after it opened. A failed opening fails every call waiting for it with its
 * error; the next call opens the file again.
 */
export class LazySqlitePersistence {
  /** Forwards to the `SqliteJournal` of the file. */
  readonly journal: Journal;
  /** Forwards to the `SqliteSessionStore` of the file. */
  readonly store: SessionStore;
  /** Forwards to the `SqliteBudgetStore` of the file. */
  readonly budgets: BudgetStore;

  private files: SqliteFiles | undefined;
  private opening: Promise<SqliteFiles> | undefined;
  /** Calls made before the file was open and not yet handed on: later calls queue behind them. */
  private queued = 0;
  private journalClosed = false;
  private storeClosed = false;
  private budgetsClosed = false;

  /**
   * @param path the database file (`<data dir>/journal.db`)
   * @param withStore whether to open a session store in it too
   * @param onBatchCommitted told of each committed journal transaction (records, ms), for metrics
   */
  constructor(
    readonly path: string,
    private readonly withStore: boolean,
    private readonly onBatchCommitted?: (records: number, durationMs: number) => void,
  ) {
    this.journal = {
      name: 'sqlite',
      write: (record: JournalRecord, listener: AppendListener) => {
        // Once open, straight through: the hot path costs one call more, no promise.
        if (this.files !== undefined && this.queued === 0) return this.files.journal.write(record, listener);
        if (this.journalClosed && this.files === undefined)
          return listener.appended(new JournalClosedError(path));
        this.use(
          (files) =>
            new Promise<void>((resolve) => {
              files.journal.write(record, listener);
              resolve();
            }),
        ).catch((error: unknown) =>
          listener.appended(error instanceof Error ? error : new Error(String(error))),
        );
      },
      append: (record: JournalRecord) =>
        this.journalClosed && this.files === undefined
          ? Promise.reject(new JournalClosedError(path))
          : this.use((files) => files.journal.append(record)),
      // Opens the file if need be: it may hold records of earlier runs.
      recordsForSession: (sessionId: string) =>
        this.use((files) => Promise.resolve(files.journal.recordsForSession(sessionId))),
      recordsForTask: (taskId: string) =>
        this.use((files) => Promise.resolve(files.journal.recordsForTask(taskId))),
      close: () => this.closeJournal(),
    };
    this.store = {
      save: (record: SessionRecord) => this.useStore((store) => store.save(record)),
      load: (sessionId: string) => this.useStore((store) => store.load(sessionId)),
      list: (workspaceCwd: string, options?: SessionListOptions) =>
        this.useStore((store) => store.list(workspaceCwd, options)),
      recordAdmissions: (accepted: readonly AcceptedPrompt[], settled: readonly SettledPrompt[]) =>
        this.useStore((store) => store.recordAdmissions(accepted, settled)),
      takeUnsettled: (sessionId: string) => this.useStore((store) => store.takeUnsettled(sessionId)),
      // The session's rows, then its settled model calls, then the log's old pages of both: a
      // purge answers once no file of the data directory holds its text.
      delete: (sessionId: string) =>
        this.useStore(async (store) => {
          const deleted = await store.delete(sessionId);
          this.files?.maintenance.deleteSessionRecords(sessionId);
          this.files?.maintenance.truncateWal();
          return deleted;
        }),
    };
    this.budgets = {
      insert: (definition, maxBudgets) =>
        this.useBudgets((budgets) => budgets.insert(definition, maxBudgets)),
      get: (budgetId) => this.useBudgets((budgets) => budgets.get(budgetId)),
    };
  }

  /** One batch of journal retention (`--journal-retention-days`); opens the file if need be. */
  pruneJournal(cutoffMs: number, afterSeq: number, maxRows: number): Promise<PruneBatch> {
    if (this.journalClosed) return Promise.reject(new JournalClosedError(this.path));
    return this.use((files) => Promise.resolve(files.maintenance.pruneBatch(cutoffMs, afterSeq, maxRows)));
  }

  /**
   * Opens the file now rather than on first use, and tells how many model calls a killed daemon
   * left without a result: opening gave each an `interrupted` result (never a re-run, SCH-15).
   */
  async recover(): Promise<{ interruptedCalls: number }> {
    const files = await this.open();
    return { interruptedCalls: files.journal.interruptedAtOpen };
  }

  /** Whether the file has been opened. */
  get opened(): boolean {
    return this.files !== undefined;
  }

  /** Closes the store, then the journal (flushing what it accepted); nothing to do if never opened. */
  async close(): Promise<void> {
    await this.closeStore();
    this.budgetsClosed = true;
    (await this.settled())?.budgets.close();
    await this.closeJournal();
  }

  private useBudgets<T>(task: (budgets: SqliteFiles['budgets']) => Promise<T>): Promise<T> {
    if (this.budgetsClosed && this.files === undefined)
      return Promise.reject(new SessionStoreClosedError(this.path));
    return this.use((files) => task(files.budgets));
  }

  private useStore<T>(task: (store: NonNullable<SqliteFiles['store']>) => Promise<T>): Promise<T> {
    if (!this.withStore) return Promise.reject(new TypeError('this persistence has no session store'));
    if (this.storeClosed && this.files === undefined)
      return Promise.reject(new SessionStoreClosedError(this.path));
    return this.use((files) => task(files.store!));
  }

  private use<T>(task: (files: SqliteFiles) => Promise<T>): Promise<T> {
    if (this.files !== undefined && this.queued === 0) return task(this.files);
    this.queued++;
    return this.open().then(
      (files) => {
        this.queued--;
        return task(files);
      },
      (error: unknown) => {
        this.queued--;
        throw error;
      },
    );
  }

  private open(): Promise<SqliteFiles> {
    if (this.opening !== undefined) return this.opening;
    const opening = import('./sqlite-files.js').then(
      ({ openSqliteFiles }) =>
        (this.files = openSqliteFiles(this.path, this.withStore, this.onBatchCommitted)),
    );
    // A failed opening fails the calls waiting for it; the next call tries again (the cause —
    // a lock held elsewhere, a full disk — may have passed), unless the file is being closed
    // or was written by a newer build (that does not pass).
    opening.catch((error: unknown) => {
      if (error instanceof SessionStoreSchemaTooNewError) return;
      if (this.opening === opening && !this.journalClosed && !this.storeClosed) this.opening = undefined;
    });
    return (this.opening = opening);
  }

  /** The files once an opening in flight settled; `undefined` if never opened or it failed. */
  private async settled(): Promise<SqliteFiles | undefined> {
    if (this.opening === undefined) return undefined;
    return this.opening.catch(() => undefined);
  }

  private async closeStore(): Promise<void> {
    this.storeClosed = true;
    await (await this.settled())?.store?.close();
  }

  private async closeJournal(): Promise<void> {
    this.journalClosed = true;
    const files = await this.settled();
    files?.maintenance.close();
    await files?.journal.close();
  }
}
