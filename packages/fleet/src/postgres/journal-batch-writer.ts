import {
  JournalClosedError,
  JournalWriteError,
  tell,
  type AppendListener,
  type ErrorReporter,
  type JournalRecord,
} from '@sluice/runtime';
import { LinkedQueue } from '@sluice/runtime/queue';
import type { Sql } from 'postgres';
import {
  batchJson,
  checkRecord,
  emptyBatchText,
  insertRecords,
  pushRecord,
  type JournalBatchText,
} from './journal-batch-text.js';
import type { StoreLeaseLostError } from './errors.js';

/** Counters of the group commit, for tests, benchmarks and diagnostics. */
export interface PostgresJournalStats {
  batchesCommitted: number;
  recordsCommitted: number;
  batchesFailed: number;
  recordsFailed: number;
  /** Accepted appends not yet confirmed or rejected. */
  recordsOutstanding: number;
}

/** What a {@link PostgresBatchWriter} writes with. */
export interface BatchWriterSettings {
  sql: Sql;
  store: string;
  nodeId: string;
  maxBatchRecords: number;
  maxBatchesInFlight: number;
  confirmSliceRecords: number;
  reportError: ErrorReporter;
  /** The lease's verdict: an error once it is lost. */
  leaseLost: () => StoreLeaseLostError | undefined;
  /** Marks the lease lost, when a write found the node's row gone; returns the error. */
  loseLease: () => StoreLeaseLostError;
}

interface Batch {
  readonly text: JournalBatchText;
  readonly listeners: AppendListener[];
}

interface Settling {
  readonly listeners: AppendListener[];
  readonly from: number;
  readonly error: Error | undefined;
  /** Errors of single records the database refused, by index in `listeners`. */
  readonly refused: ReadonlyMap<number, Error> | undefined;
}

interface InsertReply {
  live: number;
  inserted: number;
  keys: string[] | null;
}

/**
 * The PostgreSQL journal's write side: group commit. Records accepted while earlier batches are
 * committing gather into the next batch, written with one `INSERT … SELECT FROM unnest(…)` (one
 * round trip for up to `maxBatchRecords`), at most `maxBatchesInFlight` at a time, pipelined on
 * the pool's connections. Each append is confirmed once its statement committed, in slices of
 * `confirmSliceRecords` per turn of the loop. Nothing here is unbounded: what waits is what the
 * runtime has in flight, which its `maxInflight` bounds.
 *
 * Every statement is fenced on this node's row (`FOR KEY SHARE`): once another node has settled
 * this one as dead, nothing more lands in its name, so no call ever gets a second result.
 */
export class PostgresBatchWriter {
  private filling: Batch | undefined;
  private readonly full = new LinkedQueue<Batch>();
  private inFlight = 0;
  private sendScheduled = false;
  private readonly settling = new LinkedQueue<Settling>();
  private settleScheduled = false;
  private accepting = true;
  private onIdle: (() => void) | undefined;
  private outstanding = 0;
  private readonly counters = {
    batchesCommitted: 0,
    recordsCommitted: 0,
    batchesFailed: 0,
    recordsFailed: 0,
  };

  constructor(private readonly settings: BatchWriterSettings) {}

  /** Accepts a record into the filling batch; `listener` hears once its statement committed. */
  write(record: JournalRecord, listener: AppendListener): void {
    const { reportError, store } = this.settings;
    if (!this.accepting) return tell(listener, new JournalClosedError(store), reportError);
    const lost = this.settings.leaseLost();
    if (lost !== undefined) return tell(listener, lost, reportError);
    let body: string;
    try {
      checkRecord(record);
      body = JSON.stringify(record);
    } catch (error) {
      return tell(listener, error instanceof Error ? error : new TypeError(String(error)), reportError);
    }
    const batch = (this.filling ??= { text: emptyBatchText(), listeners: [] });
    pushRecord(batch.text, record, body);
    batch.listeners.push(listener);
    this.outstanding++;
    if (batch.listeners.length >= this.settings.maxBatchRecords) {
      this.full.enqueue(batch);
      this.filling = undefined;
    }
    if (this.inFlight < this.settings.maxBatchesInFlight && !this.sendScheduled) {
      this.sendScheduled = true;
      setImmediate(this.sendNext);
    }
  }

  /** Stops accepting; resolves once every accepted record is confirmed or failed. */
  drain(): Promise<void> {
    this.accepting = false;
    return new Promise<void>((resolve) => {
      this.onIdle = resolve;
      this.checkIdle();
    });
  }

  stats(): PostgresJournalStats {
    return { ...this.counters, recordsOutstanding: this.outstanding };
  }

  private readonly sendNext = (): void => {
    this.sendScheduled = false;
    while (this.inFlight < this.settings.maxBatchesInFlight) {
      const batch = this.full.dequeue() ?? this.takeFilling();
      if (batch === undefined) break;
      this.inFlight++;
      void this.commit(batch).finally(() => {
        this.inFlight--;
        this.sendNext();
        this.checkIdle();
      });
    }
  };

  private takeFilling(): Batch | undefined {
    const batch = this.filling;
    this.filling = undefined;
    return batch;
  }

  private async commit(batch: Batch): Promise<void> {
    const { sql, nodeId } = this.settings;
    const n = batch.listeners.length;
    let reply: InsertReply | undefined;
    try {
      [reply] = await sql<InsertReply[]>`
        WITH me AS (SELECT 1 FROM sluice_nodes WHERE node_id = ${nodeId} FOR KEY SHARE),
        ins AS (
          ${insertRecords(sql, nodeId, batchJson(batch.text))}
          WHERE EXISTS (SELECT 1 FROM me)
          ON CONFLICT (call_id, type) DO NOTHING
          RETURNING type, call_id)
        SELECT (SELECT count(*) FROM me)::int AS live, count(*)::int AS inserted,
               CASE WHEN count(*) < ${n} THEN array_agg(type || ' ' || call_id) END AS keys
        FROM ins`;
    } catch (error) {
      return this.failed(batch, this.writeError(`transaction of ${n} record(s) failed`, error));
    }
    if (reply === undefined || reply.live === 0) {
      return this.failed(batch, this.settings.loseLease());
    }
    this.counters.batchesCommitted++;
    this.counters.recordsCommitted += reply.inserted;
    const refused = reply.inserted < n ? this.refusedRecords(batch, reply.keys ?? []) : undefined;
    this.counters.recordsFailed += refused?.size ?? 0;
    this.settle(batch.listeners, undefined, refused);
  }

  /** The records of a batch that the unique (call, type) index refused: a second record of a call. */
  private refusedRecords(batch: Batch, keys: readonly string[]): Map<number, Error> {
    const inserted = new Set(keys);
    const refused = new Map<number, Error>();
    batch.text.keys.forEach((key, i) => {
      if (inserted.delete(key)) return;
      const [type, callId] = key.split(' ');
      refused.set(i, this.writeError(`record refused: call ${callId} already has a ${type} record`));
    });
    return refused;
  }

  private failed(batch: Batch, error: Error): void {
    this.counters.batchesFailed++;
    this.counters.recordsFailed += batch.listeners.length;
    this.settle(batch.listeners, error, undefined);
  }

  private settle(
    listeners: AppendListener[],
    error: Error | undefined,
    refused: Map<number, Error> | undefined,
  ): void {
    const size = this.settings.confirmSliceRecords;
    for (let from = 0; from < listeners.length; from += size)
      this.settling.enqueue({ listeners, from, error, refused });
    if (!this.settleScheduled) this.settleNext();
  }

  private readonly settleTick = (): void => {
    this.settleScheduled = false;
    this.settleNext();
  };

  /** Delivers one slice now and schedules the next for the next turn of the loop. */
  private settleNext(): void {
    const next = this.settling.dequeue();
    if (next === undefined) return this.checkIdle();
    const { listeners, from, error, refused } = next;
    const to = Math.min(listeners.length, from + this.settings.confirmSliceRecords);
    this.outstanding -= to - from;
    for (let i = from; i < to; i++) tell(listeners[i]!, error ?? refused?.get(i), this.settings.reportError);
    if (this.settling.size > 0) {
      this.settleScheduled = true;
      setImmediate(this.settleTick);
    } else this.checkIdle();
  }

  private checkIdle(): void {
    if (this.onIdle === undefined || this.settling.size > 0 || this.inFlight > 0) return;
    if (this.filling !== undefined || this.full.size > 0) return;
    this.onIdle();
  }

  private writeError(message: string, cause?: unknown): JournalWriteError {
    const detail = cause instanceof Error ? `: ${cause.message}` : '';
    const code = (cause as { code?: unknown } | undefined)?.code;
    return new JournalWriteError(
      this.settings.store,
      `${message}${detail}`,
      typeof code === 'string' ? code : undefined,
      cause === undefined ? undefined : { cause },
    );
  }
}
