import type { Journal, JournalRecord } from './records.js';

/**
 * A journal kept in process memory, for tests, demos and benchmarks that measure the
 * scheduler alone. Bounded: appends beyond `maxRecords` reject instead of growing.
 */
export class MemoryJournal implements Journal {
  readonly name = 'memory';
  readonly maxRecords: number;
  private readonly stored: JournalRecord[] = [];
  private closed = false;

  constructor(options: { maxRecords?: number } = {}) {
    const max = options.maxRecords ?? 100_000;
    if (!(Number.isSafeInteger(max) && max > 0)) {
      throw new RangeError(`maxRecords must be a positive integer, got ${String(max)}`);
    }
    this.maxRecords = max;
  }

  append(record: JournalRecord): Promise<void> {
    if (this.closed) return Promise.reject(new Error('memory journal is closed'));
    if (this.stored.length >= this.maxRecords) {
      return Promise.reject(new Error(`memory journal is full (maxRecords ${this.maxRecords})`));
    }
    this.stored.push(structuredClone(record));
    return Promise.resolve();
  }

  /** Every record in append order. */
  records(): readonly JournalRecord[] {
    return this.stored;
  }

  recordsForCall(callId: string): JournalRecord[] {
    return this.stored.filter((r) => r.callId === callId);
  }

  /** Forgets what was stored, so long benchmark runs stay within `maxRecords`. */
  clear(): void {
    this.stored.length = 0;
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}
