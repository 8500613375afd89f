import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { appendThroughWrite, type AppendListener, type Journal, type JournalRecord } from './records.js';
import { SqliteBatchWriter, type SqliteJournalStats } from './sqlite-batch-writer.js';
import { SqliteJournalReader } from './sqlite-journal-reader.js';
import { resolveSqliteJournalOptions, type SqliteJournalOptions } from './sqlite-journal-options.js';
import { initializeJournalFile, markFileSettled } from './sqlite-schema.js';

/**
 * The durable journal, the audit trail of every model call: a SQLite file in WAL mode. Appends
 * are group-committed off the event loop's thread and confirmed only once committed, so that
 * recording never stalls admission and a confirmed record survives a crash.
 */
export class SqliteJournal implements Journal {
  readonly name = 'sqlite';
  readonly path: string;
  private readonly writer: SqliteBatchWriter;
  private readonly reader: SqliteJournalReader;
  private closing: Promise<void> | undefined;
  /** Requests written minus results written: zero at close means the file is settled. */
  private openCalls = 0;
  private readonly reconciles: boolean;
  /**
   * Calls a killed daemon left without a result, found when this journal opened the file:
   * each now has a result with error code `interrupted` and was not re-run (SCH-15).
   */
  readonly interruptedAtOpen: number;

  /** Creates the file and its directory when missing and migrates the schema, synchronously. */
  constructor(options: SqliteJournalOptions) {
    const settings = resolveSqliteJournalOptions(options);
    this.path = settings.path;
    mkdirSync(dirname(this.path), { recursive: true });
    const { busyTimeoutMs } = settings.writer;
    this.reconciles = settings.reconcileInterrupted;
    this.interruptedAtOpen = initializeJournalFile(this.path, busyTimeoutMs, this.reconciles).interrupted;
    this.reader = new SqliteJournalReader(this.path, settings.writer.busyTimeoutMs);
    this.writer = new SqliteBatchWriter(settings);
  }

  /**
   * Accepts a record into the current batch; `listener` hears once its transaction has
   * committed, or {@link JournalWriteError} when it failed. Never blocks on the disk.
   */
  write(record: JournalRecord, listener: AppendListener): void {
    this.openCalls += record.type === 'model_request' ? 1 : -1;
    this.writer.write(record, listener);
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
    return this.reader.recordsForCall(callId);
  }

  /** Records of one task, in commit order. */
  recordsForTask(taskId: string): JournalRecord[] {
    return this.reader.recordsForTask(taskId);
  }

  /** Records of one session, in commit order. */
  recordsForSession(sessionId: string): JournalRecord[] {
    return this.reader.recordsForSession(sessionId);
  }

  /** Number of committed records. */
  count(): number {
    return this.reader.count();
  }

  /** Group-commit counters. */
  stats(): SqliteJournalStats {
    return this.writer.stats();
  }

  /** The writer thread once started; tests reach it to kill it. */
  private get worker(): Worker | undefined {
    return this.writer.thread;
  }

  private async shutdown(): Promise<void> {
    const draining = this.writer.drain();
    if (draining) await draining;
    this.reader.close();
    // The writer closes last, so its close checkpoints the WAL back into the database file.
    await this.writer.stop();
    // Every call written has its result: the next start-up need not look for interrupted ones.
    if (this.reconciles && this.openCalls === 0 && this.writer.stats().recordsFailed === 0)
      markFileSettled(this.path);
  }
}
