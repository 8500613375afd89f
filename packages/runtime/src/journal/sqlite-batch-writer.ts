import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { jsonBytes } from '../json-bytes.js';
import { LinkedQueue } from '../scheduler/linked-queue.js';
import type { ErrorReporter } from '../report-error.js';
import { JournalClosedError, JournalWriteError } from './journal-errors.js';
import { tell, type AppendListener, type JournalRecord } from './records.js';
import type { SqliteJournalSettings, WriterSettings } from './sqlite-journal-options.js';

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
  /** The records' JSON texts as UTF-8, in append order; emptied once handed to the writer. */
  bodies: Buffer[];
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

const noop = (): void => {};

/**
 * The journal's write side: group commit through a writer thread (sqlite-journal-worker.js),
 * so that fsync and checkpoints never stall the event loop that admits work. At most one batch
 * is being committed while the next one fills; each append is confirmed once the transaction
 * holding its record has committed, in slices of `confirmSliceRecords`, one slice per turn of
 * the loop. The main thread's cost per record is its encoding as JSON in UTF-8 (`jsonBytes`).
 */
export class SqliteBatchWriter {
  private readonly path: string;
  private readonly maxBatchRecords: number;
  private readonly confirmSliceRecords: number;
  private readonly reportError: ErrorReporter;
  private readonly onBatchCommitted: ((records: number, durationMs: number) => void) | undefined;
  /** When the batch in flight was handed to the writer (`performance.now()`), for `onBatchCommitted`. */
  private sentAt = 0;
  /** The writer thread, started by the first batch: an idle journal costs no thread (~10 MiB). */
  private worker: Worker | undefined;
  private readonly workerData: WriterSettings;

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

  constructor(settings: SqliteJournalSettings) {
    this.path = settings.path;
    this.maxBatchRecords = settings.maxBatchRecords;
    this.confirmSliceRecords = settings.confirmSliceRecords;
    this.reportError = settings.reportError;
    this.onBatchCommitted = settings.onBatchCommitted;
    this.workerData = settings.writer;
  }

  /** Accepts a record into the current batch; `listener` hears once its transaction committed. */
  write(record: JournalRecord, listener: AppendListener): void {
    if (!this.accepting) return tell(listener, new JournalClosedError(this.path), this.reportError);
    if (this.failure) return tell(listener, this.failure, this.reportError);
    let body: Buffer;
    try {
      checkRecord(record);
      body = jsonBytes(record);
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

  /**
   * Stops accepting. Returns a promise when records are still outstanding, which resolves once
   * each is confirmed or failed; undefined when none is.
   */
  drain(): Promise<void> | undefined {
    this.accepting = false;
    if (!this.inflight && !this.filling && this.full.size === 0 && this.settling.size === 0) return undefined;
    return new Promise<void>((resolve) => {
      this.onIdle = resolve;
      this.checkIdle();
    });
  }

  /** After {@link drain}: closes the writer thread, whose close checkpoints the WAL into the file. */
  async stop(): Promise<void> {
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

  /** The writer thread, once started. */
  get thread(): Worker | undefined {
    return this.worker;
  }

  stats(): SqliteJournalStats {
    return { ...this.counters, recordsOutstanding: this.outstanding };
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
      if (this.onBatchCommitted !== undefined) this.sentAt = performance.now();
      const { bytes, ends } = packBodies(batch.bodies);
      worker.postMessage({ type: 'commit', bytes, ends }, [bytes.buffer as ArrayBuffer]);
      batch.bodies = []; // the writer has the bytes; don't keep the bodies alive until the ack
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
    const error =
      reply.type === 'committed' ? this.committed(batch, reply.rejected ?? []) : this.failed(batch, reply);
    for (const slice of batch.slices) this.settling.enqueue({ slice, error });
    // The writer starts on the next batch while this thread confirms the last one.
    this.sendNext();
    if (!this.settleScheduled) this.settleNext();
  }

  /** Counts a committed batch and marks the records SQLite refused alone. */
  private committed(batch: Batch, refused: RefusedRecord[]): undefined {
    this.counters.batchesCommitted++;
    this.counters.recordsCommitted += batch.records - refused.length;
    this.counters.recordsFailed += refused.length;
    const observe = this.onBatchCommitted;
    if (observe !== undefined) {
      try {
        observe(batch.records - refused.length, performance.now() - this.sentAt);
      } catch (error) {
        this.reportError(error);
      }
    }
    for (const { index, message, sqliteCode } of refused) {
      const slice = batch.slices[Math.floor(index / this.confirmSliceRecords)];
      if (!slice) continue;
      (slice.refused ??= [])[index % this.confirmSliceRecords] = new JournalWriteError(
        this.path,
        `record refused: ${message}`,
        sqliteCode,
      );
    }
    return undefined;
  }

  /** Counts a failed batch; returns the error every record of it gets. */
  private failed(batch: Batch, reply: { message: string; sqliteCode: string | undefined }): Error {
    this.counters.batchesFailed++;
    this.counters.recordsFailed += batch.records;
    return new JournalWriteError(
      this.path,
      `transaction of ${batch.records} record(s) failed: ${reply.message}`,
      reply.sqliteCode,
    );
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

  /** Lets a pending drain proceed once nothing is left to commit or to confirm. */
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

  private writerError(message: string, cause?: unknown): JournalWriteError {
    return new JournalWriteError(this.path, message, undefined, cause === undefined ? undefined : { cause });
  }
}

/**
 * A batch's records in one buffer of its own, which `postMessage` hands over without a copy, with
 * each record's end offset. The records are encoded by {@link jsonBytes} as they are appended:
 * cloning JSON texts to the writer instead cost the main thread ~2 ms for an agent's 80 KiB
 * request record holding a few characters outside ASCII (a two-byte string).
 */
export function packBodies(bodies: readonly Buffer[]): { bytes: Buffer; ends: number[] } {
  let total = 0;
  for (const body of bodies) total += body.length;
  const bytes = Buffer.allocUnsafeSlow(total);
  const ends: number[] = [];
  let offset = 0;
  for (const body of bodies) {
    offset += body.copy(bytes, offset);
    ends.push(offset);
  }
  return { bytes, ends };
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
