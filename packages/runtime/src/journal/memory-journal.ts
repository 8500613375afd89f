import { rethrowLater, type ErrorReporter } from '../report-error.js';
import { positiveInteger } from '../validate.js';
import {
  appendThroughWrite,
  tell,
  type AppendListener,
  type Journal,
  type JournalRecord,
} from './records.js';

/** Options of a {@link MemoryJournal}. */
export interface MemoryJournalOptions {
  /** Records kept at most (default 100 000). */
  maxRecords?: number;
  /** When full: refuse further appends (`reject`, the default, for tests) or drop the oldest (`evict`). */
  whenFull?: 'reject' | 'evict';
  /** Gets what a listener throws, so that `write` never throws; default {@link rethrowLater}. */
  reportError?: ErrorReporter;
}

/**
 * A journal kept in process memory, for tests, demos and benchmarks that measure the
 * scheduler alone. Bounded: a ring of `maxRecords`. Records are kept as given (the runtime
 * builds a fresh record per append and never changes it); confirmation is synchronous.
 */
export class MemoryJournal implements Journal {
  readonly name = 'memory';
  readonly maxRecords: number;
  private readonly whenFull: 'reject' | 'evict';
  private readonly ring: Array<JournalRecord | undefined>;
  private start = 0;
  private count = 0;
  private closed = false;
  private readonly reportError: ErrorReporter;

  constructor(options: MemoryJournalOptions = {}) {
    const max = positiveInteger('maxRecords', options.maxRecords ?? 100_000);
    const whenFull = options.whenFull ?? 'reject';
    if (whenFull !== 'reject' && whenFull !== 'evict') {
      throw new RangeError(`whenFull must be "reject" or "evict", got ${String(whenFull)}`);
    }
    this.maxRecords = max;
    this.whenFull = whenFull;
    this.ring = [];
    this.reportError = options.reportError ?? rethrowLater;
  }

  /** Keeps `record` and confirms it before returning. */
  write(record: JournalRecord, listener: AppendListener): void {
    if (this.closed) return tell(listener, new Error('memory journal is closed'), this.reportError);
    if (this.count === this.maxRecords) {
      if (this.whenFull === 'reject') {
        const full = new Error(`memory journal is full (maxRecords ${this.maxRecords})`);
        return tell(listener, full, this.reportError);
      }
      this.ring[this.start] = record;
      this.start = this.start + 1 === this.maxRecords ? 0 : this.start + 1;
      return tell(listener, undefined, this.reportError);
    }
    const end = this.start + this.count;
    this.ring[end < this.maxRecords ? end : end - this.maxRecords] = record;
    this.count++;
    tell(listener, undefined, this.reportError);
  }

  append(record: JournalRecord): Promise<void> {
    return appendThroughWrite(this, record);
  }

  /** Every kept record, oldest first. */
  records(): JournalRecord[] {
    const out: JournalRecord[] = [];
    for (let i = 0; i < this.count; i++)
      out.push(this.ring[(this.start + i) % this.maxRecords] as JournalRecord);
    return out;
  }

  recordsForCall(callId: string): JournalRecord[] {
    return this.records().filter((r) => r.callId === callId);
  }

  recordsForSession(sessionId: string): JournalRecord[] {
    return this.records().filter((r) => r.sessionId === sessionId);
  }

  recordsForTask(taskId: string): JournalRecord[] {
    return this.records().filter((r) => r.taskId === taskId);
  }

  /** Forgets every kept record. */
  clear(): void {
    this.ring.length = 0;
    this.start = this.count = 0;
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}
