import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Clock, PruneBatch, TimerHandle } from '@sluice/runtime';

const DAY_MS = 86_400_000;
/** How often a pass runs after the one at start-up. */
export const JOURNAL_RETENTION_INTERVAL_MS = 3_600_000;
/** Records one batch looks at: one short transaction, so the journal's writer waits milliseconds. */
export const JOURNAL_RETENTION_BATCH_ROWS = 1_000;

/** Options of {@link JournalRetention}. */
export interface JournalRetentionOptions {
  /** Model calls that ended more than this many days ago are deleted (a positive integer). */
  days: number;
  /** Schedules the passes. */
  clock: Clock;
  /** Wall-clock epoch ms: the cutoff is `wallNow() - days`. */
  wallNow: () => number;
  /** Deletes one batch (`LazySqlitePersistence.pruneJournal`). */
  prune: (cutoffMs: number, afterSeq: number, maxRows: number) => Promise<PruneBatch>;
  /** Told after each pass that deleted something. */
  onPruned?: (report: { deletedCalls: number; cutoff: string }) => void;
  onError: (error: unknown, context: string) => void;
  intervalMs?: number;
  batchRows?: number;
}

/**
 * `--journal-retention-days`: deletes model calls whose result is older than the retention from
 * the journal, once at start-up and then every hour. A pass walks the journal oldest first in
 * batches of {@link JOURNAL_RETENTION_BATCH_ROWS} records, each its own transaction, yielding to
 * the event loop in between, so neither the writer nor requests wait for a whole pass. A call
 * still running keeps its request (SCH-9): a request goes only with its result.
 */
export class JournalRetention {
  private readonly retentionMs: number;
  private readonly intervalMs: number;
  private readonly batchRows: number;
  private timer: TimerHandle | undefined;
  private running: Promise<number> | undefined;
  private stopped = false;

  /** The retention of `days`, or `undefined` when it is 0 (keep for ever) or there is nothing to prune. */
  static of(
    days: number,
    options: Omit<JournalRetentionOptions, 'days' | 'prune'> & {
      prune: JournalRetentionOptions['prune'] | undefined;
    },
  ): JournalRetention | undefined {
    const { prune } = options;
    return days === 0 || prune === undefined ? undefined : new JournalRetention({ ...options, days, prune });
  }

  constructor(private readonly options: JournalRetentionOptions) {
    if (!Number.isInteger(options.days) || options.days < 1)
      throw new RangeError(`journalRetentionDays must be a positive integer, got ${String(options.days)}`);
    this.retentionMs = options.days * DAY_MS;
    this.intervalMs = options.intervalMs ?? JOURNAL_RETENTION_INTERVAL_MS;
    this.batchRows = options.batchRows ?? JOURNAL_RETENTION_BATCH_ROWS;
  }

  /** Runs a pass now, then one every interval until {@link stop}. */
  start(): void {
    void this.runPass();
    this.arm();
  }

  /**
   * One pass over the journal; resolves with the calls it deleted. A pass already running is
   * joined, not doubled. Failures are reported to `onError` and end the pass.
   */
  runPass(): Promise<number> {
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Stops scheduling passes and resolves once a running pass has finished its batch. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.options.clock.clearTimer(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private async pass(): Promise<number> {
    const cutoffMs = this.options.wallNow() - this.retentionMs;
    let afterSeq = 0;
    let deletedCalls = 0;
    try {
      for (;;) {
        const batch = await this.options.prune(cutoffMs, afterSeq, this.batchRows);
        deletedCalls += batch.deletedCalls;
        afterSeq = batch.lastSeq;
        if (batch.done || this.stopped) break;
        await nextTurn();
      }
    } catch (error) {
      this.options.onError(error, 'journal retention');
    }
    if (deletedCalls > 0) this.options.onPruned?.({ deletedCalls, cutoff: new Date(cutoffMs).toISOString() });
    return deletedCalls;
  }

  private arm(): void {
    if (this.stopped) return;
    this.timer = this.options.clock.setTimer(() => {
      this.timer = undefined;
      void this.runPass();
      this.arm();
    }, this.intervalMs);
    (this.timer as { unref?: () => void } | undefined)?.unref?.();
  }
}
