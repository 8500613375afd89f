import type { PoolBatch } from './pool-batch.js';

/** A leave or release to send again, with the batch of its pool. */
interface Unsent {
  batch: PoolBatch;
  release: boolean;
  tokens: number;
}

/**
 * Leaves and releases whose reply did not come (Redis unreachable, a reply lost): kept by lease
 * id and sent again once Redis answers — harmless if the first one did arrive, as both are
 * idempotent per lease. At most one entry per lease, so bounded by the leases held when the
 * outage began (admissions during an outage are held locally and never land here).
 */
export class UnsentTransitions {
  private readonly entries = new Map<string, Unsent>();

  get size(): number {
    return this.entries.size;
  }

  /** Remembers a transition of lease `id` to resend; a release supersedes a leave. */
  add(id: string, batch: PoolBatch, release: boolean, tokens: number): void {
    const previous = this.entries.get(id);
    this.entries.set(id, {
      batch,
      release: release || (previous?.release ?? false),
      tokens: Math.max(tokens, previous?.tokens ?? 0),
    });
  }

  /** Sends every entry again; those that fail again are kept for the next flush. */
  async flush(): Promise<void> {
    if (this.entries.size === 0) return;
    const entries = [...this.entries];
    this.entries.clear();
    await Promise.all(
      entries.map(([id, { batch, release, tokens }]) =>
        batch.push(release ? 'r' : 'l', id, tokens).catch(() => this.add(id, batch, release, tokens)),
      ),
    );
  }
}
