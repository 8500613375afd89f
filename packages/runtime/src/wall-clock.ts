/** How long a {@link WallClock} trusts its offset before it asks the system's clock again. */
const REANCHOR_MS = 1_000;

/**
 * Wall-clock time derived from a monotonic reading the caller already has, so that stamping a
 * record costs no second clock read (on some virtual machines each read is a system call). The
 * offset to `Date.now()` is re-taken at most once a second, which follows NTP adjustments.
 */
export class WallClock {
  private offset = 0;
  private anchoredAt = -Infinity;

  constructor(private readonly epochMs: () => number = Date.now) {}

  /** Epoch ms at the monotonic instant `monotonicMs`. */
  at(monotonicMs: number): number {
    const sinceAnchor = monotonicMs - this.anchoredAt;
    if (!(sinceAnchor >= 0 && sinceAnchor < REANCHOR_MS)) {
      this.anchoredAt = monotonicMs;
      this.offset = this.epochMs() - monotonicMs;
    }
    return Math.floor(monotonicMs + this.offset);
  }
}
