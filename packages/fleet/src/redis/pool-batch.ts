/** One transition of a lease, as the batch script takes it: admit, leave or release. */
export type TransitionKind = 'a' | 'l' | 'r';

interface Pending {
  kind: TransitionKind;
  id: string;
  tokens: number;
  resolve(reply: string): void;
  reject(error: unknown): void;
}

/** Sends one batch: the transitions' arguments (three each) after the script's header. */
export type SendBatch = (transitions: Array<string | number>) => Promise<string[]>;

/**
 * The transitions one node issues in a pool within one tick, sent as one script run (see
 * BATCH_LUA): every admission, leave and release still takes exactly one round trip, but
 * concurrent ones share it — and the script's fixed cost — instead of each paying its own.
 * Applied in the order they were issued, so the fleet's FIFO sees this node's admissions in
 * order. A batch holds at most `maxBatch` transitions; more start the next one at once.
 */
export class PoolBatch {
  private pending: Pending[] = [];
  private scheduled = false;

  constructor(
    private readonly send: SendBatch,
    private readonly maxBatch = 256,
  ) {}

  /** Queues a transition for this tick's batch; resolves with its reply. */
  push(kind: TransitionKind, id: string, tokens = 0): Promise<string> {
    return new Promise((resolve, reject) => {
      this.pending.push({ kind, id, tokens, resolve, reject });
      if (this.pending.length >= this.maxBatch) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        // After the promise reactions of this tick: what they issue joins the batch.
        process.nextTick(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    const args: Array<string | number> = [];
    for (const { kind, id, tokens } of batch) args.push(kind, id, tokens);
    this.send(args).then(
      (replies) => {
        for (let i = 0; i < batch.length; i++) batch[i]!.resolve(replies[i] ?? '');
      },
      (error: unknown) => {
        for (const transition of batch) transition.reject(error);
      },
    );
  }
}
