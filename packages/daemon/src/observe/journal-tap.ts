import { BATCH_RECORDS, COMMIT_SECONDS, Distribution } from './distribution.js';

/**
 * The journal's counters: each committed transaction's latency and size, as the SQLite journal
 * reports them, and the calls start-up reconciliation found interrupted (`Daemon.recover()`).
 */
export class JournalTap {
  /** Seconds from handing a batch to the writer thread to its commit. */
  readonly commitSeconds = new Distribution(COMMIT_SECONDS);
  /** Records per committed transaction; their sum is the records committed. */
  readonly batchRecords = new Distribution(BATCH_RECORDS);
  private interrupted: number | undefined;

  /** The SQLite journal's `onBatchCommitted`. */
  readonly batchCommitted = (records: number, durationMs: number): void => {
    this.batchRecords.observe(records);
    this.commitSeconds.observe(durationMs / 1000);
  };

  /** Records committed since start. */
  get recordsCommitted(): number {
    return this.batchRecords.sum;
  }

  /** Model calls a killed daemon had left open, settled as `interrupted` at start-up; undefined until recovery ran. */
  get interruptedCalls(): number | undefined {
    return this.interrupted;
  }

  /** What `Daemon.recover()` found. */
  recovered(interruptedCalls: number): void {
    this.interrupted = interruptedCalls;
  }
}
