import type { AcceptedPrompt, AdmissionLedgerStore, SettledPrompt } from '@sluice/store';

/** The `turn_error` code of a prompt a killed daemon accepted and never ended. */
export const DAEMON_RESTARTED = 'daemon_restarted';

interface Waiting {
  readonly prompt: AcceptedPrompt;
  readonly resolve: () => void;
}

/**
 * Records admissions durably in batches: every prompt accepted in one turn of the event loop is
 * written in one transaction, with the prompts that ended meanwhile, and the prompt's `202`
 * waits for that commit (the 202 is a promise that survives `kill -9`). A prompt that ends
 * before its batch is written is never written at all. A failed write is reported and never
 * fails a prompt.
 */
export class PromptLedger {
  private accepted = new Map<string, Waiting>();
  private settled: SettledPrompt[] = [];
  private flushing: Promise<void> | undefined;
  private scheduled = false;

  constructor(
    private readonly store: AdmissionLedgerStore | undefined,
    private readonly onError: (error: unknown, context: string) => void,
  ) {}

  /** Whether admissions are recorded at all (the store keeps a ledger). */
  get durable(): boolean {
    return this.store !== undefined;
  }

  /** Records an accepted prompt; resolves once it is committed (or its write failed, reported). */
  accept(prompt: AcceptedPrompt): Promise<void> | undefined {
    if (this.store === undefined) return undefined;
    const recorded = new Promise<void>((resolve) => {
      this.accepted.set(keyOf(prompt), { prompt, resolve });
    });
    this.schedule();
    return recorded;
  }

  /** The prompt ended: forget its acceptance (without a write when it was never written). */
  settle(prompt: SettledPrompt): void {
    if (this.store === undefined) return;
    const key = keyOf(prompt);
    const waiting = this.accepted.get(key);
    if (waiting !== undefined) {
      this.accepted.delete(key);
      return waiting.resolve();
    }
    this.settled.push({ sessionId: prompt.sessionId, promptId: prompt.promptId });
    this.schedule();
  }

  /** The session's prompts a killed daemon accepted and never ended; forgets them. */
  async takeUnsettled(sessionId: string): Promise<AcceptedPrompt[]> {
    if (this.store === undefined) return [];
    await this.flush(); // what ended meanwhile is written first
    return this.store.takeUnsettled(sessionId);
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /** Writes one batch, after the one being written: batches commit in order. */
  private async flush(): Promise<void> {
    while (this.flushing !== undefined) await this.flushing;
    if (this.accepted.size === 0 && this.settled.length === 0) return;
    const batch = [...this.accepted.values()];
    const settled = this.settled;
    this.accepted = new Map();
    this.settled = [];
    const writing = this.write(batch, settled);
    this.flushing = writing;
    await writing;
    this.flushing = undefined;
  }

  private async write(batch: Waiting[], settled: SettledPrompt[]): Promise<void> {
    try {
      await this.store!.recordAdmissions(
        batch.map((waiting) => waiting.prompt),
        settled,
      );
    } catch (error) {
      this.onError(error, 'store.recordAdmissions');
    } finally {
      for (const waiting of batch) waiting.resolve();
    }
  }
}

function keyOf(prompt: SettledPrompt): string {
  return `${prompt.sessionId}\n${prompt.promptId}`;
}
