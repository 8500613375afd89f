import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { LinkedQueue } from '../scheduler/linked-queue.js';
import { rethrowLater, type ErrorReporter } from '../report-error.js';
import {
  appendThroughWrite,
  tell,
  type AppendListener,
  type Journal,
  type JournalRecord,
} from './records.js';
import { initializeJournalFile } from './sqlite-schema.js';
import { JournalClosedError, JournalWriteError } from './journal-errors.js';
import { nonNegativeInteger, positiveInteger } from '../validate.js';

export { JournalClosedError, JournalWriteError } from './journal-errors.js';

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
   * Appends confirmed per turn of the event loop once their transaction committed. A commit
   * confirms its records in slices of this many, one slice per turn, so that the work their
   * callers resume with never holds the loop for a whole batch. Default 64.
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
}

/** Counters of the group commit, for tests and diagnostics. */
export interface SqliteJournalStats {
  batchesCommitted: number;
  recordsCommitted: number;
  batchesFailed: number;
  recordsFailed: number;
  /** Accepted appends not yet confirmed or rejected. */
  recordsOutstanding: number;
}

/** Appends confirmed in the same turn of the loop: at most `confirmSliceRecords` of them. */
interface Slice {
  readonly listeners: AppendListener[];
  /** Errors of records the writer refused alone, by position in `listeners`. */
  refused?: Array<Error | undefined>;
}

interface Batch {
  /** The records' JSON texts, in append order; emptied once handed to the writer. */
  bodies: string[];
  records: number;
  readonly slices: Slice[];
  /** The slice new appends join. */
  slice: Slice;
}

type WriterReply =
  | { type: 'committed'; rejected?: RefusedRecord[] }
  | { type: 'failed'; message: string; sqliteCode: string | undefined }
  | { type: 'closed'; message: string | undefined };

/** A record of a batch that SQLite refused while the others committed; `index` in append order. */
interface RefusedRecord {
  index: number;
  message: string;
  sqliteCode: string | undefined;
}

/** What the writer thread is started with (its `workerData`). */
interface WriterSettings {
  path: string;
  synchronous: 'NORMAL' | 'FULL';
  busyTimeoutMs: number;
  walAutocheckpointPages: number;
  walSizeLimitBytes: number;
  idleCheckpointMs: number;
}

const DEFAULT_MAX_BATCH_RECORDS = 2048;
const DEFAULT_BUSY_TIMEOUT_MS = 5000;
const DEFAULT_CONFIRM_SLICE_RECORDS = 64;
const DEFAULT_WAL_AUTOCHECKPOINT_PAGES = 10_000;
const DEFAULT_WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;
const DEFAULT_IDLE_CHECKPOINT_MS = 250;
const noop = (): void => {};

/**
 * The durable journal: a SQLite file in WAL mode, written by a worker thread so that fsync and
 * checkpoints never stall the event loop that admits work. Appends are group-committed: at most
 * one batch is being committed while the next one fills, and each append resolves only once the
 * transaction holding its record has committed. Confirmations are spread over turns of the
 * event loop (see {@link SqliteJournalOptions.confirmSliceRecords}), and the main thread's cost
 * per record is one `JSON.stringify`: SQLite derives the indexed columns from the text.
 */
export class SqliteJournal implements Journal {
  readonly name = 'sqlite';
  readonly path: string;

  private readonly maxBatchRecords: number;
  private readonly confirmSliceRecords: number;
  /** The writer thread, started by the first batch: an idle journal costs no thread (~10 MiB). */
  private worker: Worker | undefined;
  private readonly workerData: WriterSettings;
  private readonly reader: Database.Database;
  private readonly selectByCall: Database.Statement<[string], string>;
  private readonly selectByTask: Database.Statement<[string, string], string>;
  private readonly selectBySession: Database.Statement<[string], string>;
  private readonly selectCount: Database.Statement<[], number>;

  private filling: Batch | undefined;
  private readonly full = new LinkedQueue<Batch>();
  private inflight: Batch | undefined;
  private sendScheduled = false;
  /** Slices whose outcome is known and not yet delivered, one per turn of the loop. */
  private readonly settling = new LinkedQueue<{ slice: Slice; error: Error | undefined }>();
  private settleScheduled = false;
  private accepting = true;
  private failure: Error | undefined;
  private stopping = false;
  private closing: Promise<void> | undefined;
  private onIdle: (() => void) | undefined;
  private closeReply: { message: string | undefined } | undefined;
  private exited: Promise<number> | undefined;
  private readonly counters = {
    batchesCommitted: 0,
    recordsCommitted: 0,
    batchesFailed: 0,
    recordsFailed: 0,
  };
  private outstanding = 0;
  private readonly reportError: ErrorReporter;

  /** Creates the file and its directory when missing and migrates the schema, synchronously. */
  constructor(options: SqliteJournalOptions) {
    this.path = journalPath(options.path);
    this.reportError = options.reportError ?? rethrowLater;
    this.maxBatchRecords = positiveInteger(
      'maxBatchRecords',
      options.maxBatchRecords ?? DEFAULT_MAX_BATCH_RECORDS,
    );
    const synchronous = options.synchronous ?? 'NORMAL';
    if (synchronous !== 'NORMAL' && synchronous !== 'FULL') {
      throw new RangeError(`synchronous must be 'NORMAL' or 'FULL', got ${String(synchronous)}`);
    }
    const busyTimeoutMs = nonNegativeInteger(
      'busyTimeoutMs',
      options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS,
    );
    this.confirmSliceRecords = positiveInteger(
      'confirmSliceRecords',
      options.confirmSliceRecords ?? DEFAULT_CONFIRM_SLICE_RECORDS,
    );
    const walAutocheckpointPages = nonNegativeInteger(
      'walAutocheckpointPages',
      options.walAutocheckpointPages ?? DEFAULT_WAL_AUTOCHECKPOINT_PAGES,
    );
    const walSizeLimitBytes = nonNegativeInteger(
      'walSizeLimitBytes',
      options.walSizeLimitBytes ?? DEFAULT_WAL_SIZE_LIMIT_BYTES,
    );
    const idleCheckpointMs = nonNegativeInteger(
      'idleCheckpointMs',
      options.idleCheckpointMs ?? DEFAULT_IDLE_CHECKPOINT_MS,
    );

    mkdirSync(dirname(this.path), { recursive: true });
    initializeJournalFile(this.path, busyTimeoutMs);

    this.reader = new Database(this.path, { readonly: true, fileMustExist: true });
    try {
      this.reader.pragma(`busy_timeout = ${busyTimeoutMs}`);
      const select = (column: string): Database.Statement<[string], string> =>
        this.reader
          .prepare<[string], string>(`SELECT body FROM journal_records WHERE ${column} = ? ORDER BY seq`)
          .pluck();
      this.selectByCall = select('call_id');
      this.selectBySession = select('session_id');
      // A temporary task's records are not in the task index (see schema version 2): its id
      // names its only call, so they are found through the call index.
      this.selectByTask = this.reader
        .prepare<[string, string], string>(
          `SELECT body FROM (
             SELECT seq, body FROM journal_records WHERE task_id = ? AND task_id <> 'tmp-' || call_id
             UNION ALL
             SELECT seq, body FROM journal_records WHERE call_id = ? AND task_id = 'tmp-' || call_id
           ) ORDER BY seq`,
        )
        .pluck();
      this.selectCount = this.reader.prepare<[], number>('SELECT count(*) FROM journal_records').pluck();
    } catch (error) {
      this.reader.close();
      throw error;
    }
    this.workerData = {
      // Absolute, so that the writer thread (started later, on first use) opens and watches the
      // file opened here even if the process changes its working directory in between.
      path: resolve(this.path),
      synchronous,
      busyTimeoutMs,
      walAutocheckpointPages,
      walSizeLimitBytes,
      idleCheckpointMs,
    };
  }

  /** The writer thread, started on first use. */
  private writer(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL('./sqlite-journal-worker.js', import.meta.url), {
      workerData: this.workerData,
    });
    this.worker = worker;
    worker.on('message', (reply: WriterReply) => this.onReply(reply));
    worker.on('error', (error) =>
      this.fail(this.writerError(`writer thread failed: ${error.message}`, error)),
    );
    worker.on('messageerror', (error) =>
      this.fail(this.writerError(`writer reply could not be read: ${error.message}`, error)),
    );
    this.exited = new Promise((resolve) => {
      worker.once('exit', (code) => {
        if (!this.stopping || code !== 0)
          this.fail(this.writerError(`writer thread exited with code ${code}`));
        resolve(code);
      });
    });
    return worker;
  }

  /**
   * Accepts a record into the current batch; `listener` hears once its transaction has
   * committed, or {@link JournalWriteError} when it failed. Never blocks on the disk.
   */
  write(record: JournalRecord, listener: AppendListener): void {
    if (!this.accepting) return tell(listener, new JournalClosedError(this.path), this.reportError);
    if (this.failure) return tell(listener, this.failure, this.reportError);
    let body: string;
    try {
      checkRecord(record);
      body = JSON.stringify(record);
    } catch (error) {
      return tell(listener, error instanceof Error ? error : new TypeError(String(error)), this.reportError);
    }
    const batch = (this.filling ??= newBatch());
    let slice = batch.slice;
    if (slice.listeners.length === this.confirmSliceRecords) {
      slice = batch.slice = newSlice();
      batch.slices.push(slice);
    }
    batch.bodies.push(body);
    batch.records++;
    slice.listeners.push(listener);
    this.outstanding++;
    if (batch.records >= this.maxBatchRecords) {
      this.full.enqueue(batch);
      this.filling = undefined;
    }
    if (!this.inflight && !this.sendScheduled) {
      this.sendScheduled = true;
      setImmediate(this.sendNext);
    }
  }

  /** {@link write} as a promise. */
  append(record: JournalRecord): Promise<void> {
    return appendThroughWrite(this, record);
  }

  /** Stops accepting, waits until every accepted record is committed or failed, then releases the file. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /** Records of one model call, in commit order. */
  recordsForCall(callId: string): JournalRecord[] {
    return this.read(this.selectByCall, callId);
  }

  /** Records of one task, in commit order. */
  recordsForTask(taskId: string): JournalRecord[] {
    this.checkReadable();
    const callId = taskId.startsWith('tmp-') ? taskId.slice(4) : '';
    return this.selectByTask.all(taskId, callId).map((body) => JSON.parse(body) as JournalRecord);
  }

  /** Records of one session, in commit order. */
  recordsForSession(sessionId: string): JournalRecord[] {
    return this.read(this.selectBySession, sessionId);
  }

  /** Number of committed records. */
  count(): number {
    this.checkReadable();
    return this.selectCount.get() ?? 0;
  }

  /** Group-commit counters. */
  stats(): SqliteJournalStats {
    return { ...this.counters, recordsOutstanding: this.outstanding };
  }

  private readonly sendNext = (): void => {
    this.sendScheduled = false;
    if (this.inflight || this.failure) return;
    const batch = this.full.dequeue() ?? this.takeFilling();
    if (!batch) {
      // An idle journal must not keep the process alive; a batch in flight does.
      this.worker?.unref();
      this.checkIdle();
      return;
    }
    this.inflight = batch;
    try {
      const worker = this.writer();
      worker.ref();
      worker.postMessage({ type: 'commit', bodies: batch.bodies });
      batch.bodies = []; // the writer has its copy; don't keep the bodies alive until the ack
    } catch (error) {
      this.fail(this.writerError('batch could not be sent to the writer thread', error));
    }
  };

  private takeFilling(): Batch | undefined {
    const batch = this.filling;
    this.filling = undefined;
    return batch;
  }

  private onReply(reply: WriterReply): void {
    if (reply.type === 'closed') {
      this.closeReply = reply;
      return;
    }
    const batch = this.inflight;
    if (!batch) {
      this.fail(this.writerError(`unexpected writer reply ${reply.type}`));
      return;
    }
    this.inflight = undefined;
    let error: Error | undefined;
    if (reply.type === 'committed') {
      const refused = reply.rejected ?? [];
      this.counters.batchesCommitted++;
      this.counters.recordsCommitted += batch.records - refused.length;
      this.counters.recordsFailed += refused.length;
      for (const { index, message, sqliteCode } of refused) {
        const slice = batch.slices[Math.floor(index / this.confirmSliceRecords)];
        if (!slice) continue;
        (slice.refused ??= [])[index % this.confirmSliceRecords] = new JournalWriteError(
          this.path,
          `record refused: ${message}`,
          sqliteCode,
        );
      }
    } else {
      this.counters.batchesFailed++;
      this.counters.recordsFailed += batch.records;
      error = new JournalWriteError(
        this.path,
        `transaction of ${batch.records} record(s) failed: ${reply.message}`,
        reply.sqliteCode,
      );
    }
    for (const slice of batch.slices) this.settling.enqueue({ slice, error });
    // The writer starts on the next batch while this thread confirms the last one.
    this.sendNext();
    if (!this.settleScheduled) this.settleNext();
  }

  private readonly settleTick = (): void => {
    this.settleScheduled = false;
    this.settleNext();
  };

  /** Delivers one slice's outcome now and schedules the next one for the next turn of the loop. */
  private settleNext(): void {
    const next = this.settling.dequeue();
    if (!next) return;
    const { listeners, refused } = next.slice;
    this.outstanding -= listeners.length;
    for (let i = 0; i < listeners.length; i++) {
      tell(listeners[i]!, next.error ?? refused?.[i], this.reportError);
    }
    if (this.settling.size > 0) {
      if (!this.settleScheduled) {
        this.settleScheduled = true;
        setImmediate(this.settleTick);
      }
    } else this.checkIdle();
  }

  /** Lets a pending close proceed once nothing is left to commit or to confirm. */
  private checkIdle(): void {
    if (!this.onIdle || this.settling.size > 0) return;
    if (!this.failure && (this.inflight || this.filling || this.full.size > 0)) return;
    this.onIdle();
  }

  /** Rejects everything accepted and not yet confirmed; later appends reject with the same error. */
  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    const batches = [this.inflight, ...this.full, this.filling];
    this.inflight = this.filling = undefined;
    while (this.full.dequeue());
    for (const batch of batches) {
      if (!batch) continue;
      this.counters.batchesFailed++;
      this.counters.recordsFailed += batch.records;
      for (const slice of batch.slices) {
        this.outstanding -= slice.listeners.length;
        for (const listener of slice.listeners) tell(listener, error, this.reportError);
      }
    }
    this.worker?.terminate().then(noop, noop);
    this.checkIdle();
  }

  private async shutdown(): Promise<void> {
    this.accepting = false;
    if (this.inflight || this.filling || this.full.size > 0 || this.settling.size > 0) {
      await new Promise<void>((resolve) => {
        this.onIdle = resolve;
        this.checkIdle();
      });
    }
    this.reader.close();
    // The writer closes last, so its close checkpoints the WAL back into the database file.
    const failedBefore = this.failure;
    if (!this.worker) return; // nothing was ever written: no writer to close
    if (!failedBefore) {
      this.stopping = true;
      this.worker.ref();
      this.worker.postMessage({ type: 'close' });
    }
    await this.exited;
    if (failedBefore) return;
    if (this.closeReply?.message !== undefined) {
      throw this.writerError(`closing the database failed: ${this.closeReply.message}`);
    }
    if (this.failure) throw this.failure;
  }

  private read(statement: Database.Statement<[string], string>, key: string): JournalRecord[] {
    this.checkReadable();
    return statement.all(key).map((body) => JSON.parse(body) as JournalRecord);
  }

  private checkReadable(): void {
    if (!this.reader.open) throw new JournalClosedError(this.path);
  }

  private writerError(message: string, cause?: unknown): JournalWriteError {
    return new JournalWriteError(this.path, message, undefined, cause === undefined ? undefined : { cause });
  }
}

function newBatch(): Batch {
  const slice = newSlice();
  return { bodies: [], records: 0, slices: [slice], slice };
}

function newSlice(): Slice {
  return { listeners: [] };
}

/** Validates the indexed columns so one malformed record cannot fail the batch it would join. */
function checkRecord(record: JournalRecord): void {
  if (typeof record !== 'object' || record === null) {
    throw new TypeError(`journal record must be an object, got ${String(record)}`);
  }
  if (!Number.isInteger(record.version)) {
    throw new TypeError(`journal record version must be an integer, got ${String(record.version)}`);
  }
  for (const field of ['type', 'callId', 'taskId', 'at'] as const) {
    if (typeof record[field] !== 'string') {
      throw new TypeError(`journal record ${field} must be a string, got ${String(record[field])}`);
    }
  }
  if (record.sessionId !== undefined && typeof record.sessionId !== 'string') {
    throw new TypeError(`journal record sessionId must be a string, got ${String(record.sessionId)}`);
  }
}

function journalPath(path: string): string {
  if (typeof path !== 'string' || path === '' || path === ':memory:' || path.startsWith('file:')) {
    throw new RangeError(`path must be a database file path, got ${String(path)}`);
  }
  return path;
}
