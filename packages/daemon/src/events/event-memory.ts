import { positiveIntegerOrInfinity } from '../validate.js';

/** What the shared budget needs of a ring: its size, and a way to drop its oldest event. */
export interface BudgetedRing {
  readonly bytes: number;
  /** Drops the oldest retained event; returns its size, 0 when the ring is empty. */
  evictOldest(): number;
}

/**
 * The daemon-wide budget of the event rings' bytes (issue 19 item 3): memory was bounded by
 * event count only, so 10 sessions of large prompts reached 2.5 GB. Every ring reports what it
 * holds; once the total passes `maxBytes`, the oldest events of the largest ring go first, so
 * one session's burst costs that session's replay window, not everyone's. Replay from an
 * evicted id answers `state_resync_required {reason:"ring_evicted"}` as for count eviction.
 */
export class EventMemory {
  readonly maxBytes: number;
  private total = 0;
  private readonly rings = new Set<BudgetedRing>();

  constructor(maxBytes: number) {
    this.maxBytes = positiveIntegerOrInfinity('maxBytes', maxBytes);
  }

  /** Bytes held by every registered ring. */
  get bytes(): number {
    return this.total;
  }

  register(ring: BudgetedRing): void {
    this.rings.add(ring);
  }

  /** Forgets a ring that is gone, and the bytes it held. */
  unregister(ring: BudgetedRing): void {
    if (this.rings.delete(ring)) this.total -= ring.bytes;
  }

  /** A ring grew (or shrank, with a negative `delta`); evicts across rings when over budget. */
  change(delta: number): void {
    this.total += delta;
    if (this.total <= this.maxBytes) return;
    // Over budget is rare in normal use; a scan of the rings (at most the session cap plus the
    // closed ones retained) then finds the largest.
    while (this.total > this.maxBytes) {
      let largest: BudgetedRing | undefined;
      for (const ring of this.rings) if (largest === undefined || ring.bytes > largest.bytes) largest = ring;
      if (largest === undefined || largest.bytes === 0) return;
      this.total -= largest.evictOldest();
    }
  }
}
