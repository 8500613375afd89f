import { appendThroughWrite, type AppendListener, type Journal, type JournalRecord } from '@sluice/runtime';
import {
  PostgresBatchWriter,
  type BatchWriterSettings,
  type PostgresJournalStats,
} from './journal-batch-writer.js';
import { PostgresJournalReader } from './journal-reader.js';

/**
 * The model-call journal on PostgreSQL, shared by every node of a fleet: the same contract as
 * the SQLite journal (docs/decisions/002) — a request is confirmed once committed, before the
 * provider may start; a result before success is delivered — with group commit and each
 * record tagged with the node that wrote it, so that only a dead node's open calls are settled
 * (`settleDeadNodes`). Built by `openPostgresFleet`, which owns the connection pool.
 */
export class PostgresJournal implements Journal {
  readonly name = 'postgres';
  /** The read side: calls by session or prompt, with their results. */
  readonly reader: PostgresJournalReader;
  private readonly writer: PostgresBatchWriter;
  /** Requests written minus results written: zero at close means every call has its result. */
  private openCalls = 0;
  private closing: Promise<boolean> | undefined;

  constructor(settings: BatchWriterSettings) {
    this.writer = new PostgresBatchWriter(settings);
    this.reader = new PostgresJournalReader(settings.sql, settings.store);
  }

  /** Accepts a record into the filling batch; `listener` hears once it committed, or why not. */
  write(record: JournalRecord, listener: AppendListener): void {
    this.openCalls += record?.type === 'model_request' ? 1 : -1;
    this.writer.write(record, listener);
  }

  /** {@link write} as a promise. */
  append(record: JournalRecord): Promise<void> {
    return appendThroughWrite(this, record);
  }

  /** Records naming a session, in commit order (the daemon's read side). */
  recordsForSession(sessionId: string): Promise<JournalRecord[]> {
    return this.reader.recordsForSession(sessionId);
  }

  /** Records of a task (a durable budget's calls), in commit order: how its spend is recovered. */
  recordsForTask(taskId: string): Promise<JournalRecord[]> {
    return this.reader.recordsForTask(taskId);
  }

  /** Group-commit counters. */
  stats(): PostgresJournalStats {
    return this.writer.stats();
  }

  /** Stops accepting and waits for every accepted record; resolves whether every call has its result. */
  drain(): Promise<boolean> {
    this.closing ??= this.writer.drain().then(() => {
      this.reader.close();
      return this.openCalls === 0 && this.writer.stats().recordsFailed === 0;
    });
    return this.closing;
  }

  /** {@link drain}; the pool is closed by the fleet that made this journal. */
  async close(): Promise<void> {
    await this.drain();
  }
}
