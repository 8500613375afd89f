import { resolve } from 'node:path';
import { rethrowLater, type ErrorReporter } from '../report-error.js';
import { SQLITE_PAGE_CACHE_KIB } from '../sqlite-connection.js';
import { nonNegativeInteger, positiveInteger } from '../validate.js';

/** Options of {@link SqliteJournal}. */
export interface SqliteJournalOptions {
  /** The database file (not `:memory:`: the writer thread and the reader share it). */
  path: string;
  /** Most records committed in one transaction. Default 2048. */
  maxBatchRecords?: number;
  /** `NORMAL` (default) survives a process crash; `FULL` also survives power loss, at an fsync per commit. */
  synchronous?: 'NORMAL' | 'FULL';
  /** How long a connection waits for a lock held by another process. Default 5000 ms. */
  busyTimeoutMs?: number;
  /**
   * Appends confirmed per turn of the event loop once their transaction committed, so that the
   * work their callers resume with never holds the loop for a whole batch. Default 64.
   */
  confirmSliceRecords?: number;
  /** WAL size, in pages, at which a commit checkpoints it into the database. Default 10 000 (~40 MB). */
  walAutocheckpointPages?: number;
  /** The WAL file is truncated to this many bytes when it restarts after a checkpoint. Default 64 MiB. */
  walSizeLimitBytes?: number;
  /** A passive checkpoint runs after this long without a batch; 0 disables it. Default 250 ms. */
  idleCheckpointMs?: number;
  /** Gets what a listener throws, after every listener of its slice heard; default {@link rethrowLater}. */
  reportError?: ErrorReporter;
  /**
   * Whether opening gives each request without a result an `interrupted` result (a killed
   * daemon's calls). Only the file's one writer may do it — a daemon holding its data
   * directory's lock — so the default is false. Default false.
   */
  reconcileInterrupted?: boolean;
  /**
   * Told after each committed transaction: how many records it held and how long the writer
   * thread took, in ms, from the hand-off to its reply — for metrics. What it throws goes to
   * `reportError`.
   */
  onBatchCommitted?: (records: number, durationMs: number) => void;
}

/** What the writer thread is started with (its `workerData`; see sqlite-journal-worker.js). */
export interface WriterSettings {
  path: string;
  synchronous: 'NORMAL' | 'FULL';
  busyTimeoutMs: number;
  walAutocheckpointPages: number;
  walSizeLimitBytes: number;
  idleCheckpointMs: number;
  /** The writer connection's page cache, in KiB ({@link SQLITE_PAGE_CACHE_KIB}). */
  pageCacheKiB: number;
}

/** {@link SqliteJournalOptions} validated, with their defaults. */
export interface SqliteJournalSettings {
  /** The path as given, for messages. */
  path: string;
  maxBatchRecords: number;
  confirmSliceRecords: number;
  reportError: ErrorReporter;
  reconcileInterrupted: boolean;
  onBatchCommitted: ((records: number, durationMs: number) => void) | undefined;
  writer: WriterSettings;
}

const DEFAULT_MAX_BATCH_RECORDS = 2048;
const DEFAULT_BUSY_TIMEOUT_MS = 5000;
const DEFAULT_CONFIRM_SLICE_RECORDS = 64;
const DEFAULT_WAL_AUTOCHECKPOINT_PAGES = 10_000;
const DEFAULT_WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;
const DEFAULT_IDLE_CHECKPOINT_MS = 250;

/** Applies the defaults and validates, naming the offending value; throws a RangeError. */
export function resolveSqliteJournalOptions(options: SqliteJournalOptions): SqliteJournalSettings {
  const path = journalPath(options.path);
  const reportError = options.reportError ?? rethrowLater;
  const maxBatchRecords = positiveInteger(
    'maxBatchRecords',
    options.maxBatchRecords ?? DEFAULT_MAX_BATCH_RECORDS,
  );
  const synchronous = options.synchronous ?? 'NORMAL';
  if (synchronous !== 'NORMAL' && synchronous !== 'FULL') {
    throw new RangeError(`synchronous must be 'NORMAL' or 'FULL', got ${String(synchronous)}`);
  }
  const busyTimeoutMs = nonNegativeInteger('busyTimeoutMs', options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS);
  const confirmSliceRecords = positiveInteger(
    'confirmSliceRecords',
    options.confirmSliceRecords ?? DEFAULT_CONFIRM_SLICE_RECORDS,
  );
  const writer: WriterSettings = {
    // Absolute, so that the writer thread (started later, on first use) opens and watches the
    // file opened now even if the process changes its working directory in between.
    path: resolve(path),
    synchronous,
    busyTimeoutMs,
    walAutocheckpointPages: nonNegativeInteger(
      'walAutocheckpointPages',
      options.walAutocheckpointPages ?? DEFAULT_WAL_AUTOCHECKPOINT_PAGES,
    ),
    walSizeLimitBytes: nonNegativeInteger(
      'walSizeLimitBytes',
      options.walSizeLimitBytes ?? DEFAULT_WAL_SIZE_LIMIT_BYTES,
    ),
    idleCheckpointMs: nonNegativeInteger(
      'idleCheckpointMs',
      options.idleCheckpointMs ?? DEFAULT_IDLE_CHECKPOINT_MS,
    ),
    pageCacheKiB: SQLITE_PAGE_CACHE_KIB,
  };
  const reconcileInterrupted = options.reconcileInterrupted ?? false;
  if (typeof reconcileInterrupted !== 'boolean')
    throw new TypeError(`reconcileInterrupted must be a boolean, got ${String(reconcileInterrupted)}`);
  const onBatchCommitted = options.onBatchCommitted;
  if (onBatchCommitted !== undefined && typeof onBatchCommitted !== 'function')
    throw new TypeError(`onBatchCommitted must be a function, got ${String(onBatchCommitted)}`);
  return {
    path,
    maxBatchRecords,
    confirmSliceRecords,
    reportError,
    reconcileInterrupted,
    onBatchCommitted,
    writer,
  };
}

function journalPath(path: string): string {
  if (typeof path !== 'string' || path === '' || path === ':memory:' || path.startsWith('file:')) {
    throw new RangeError(`path must be a database file path, got ${String(path)}`);
  }
  return path;
}
