/**
 * When a refused caller may find room in a pool: the `ahead` calls drain through `slots` at the
 * pace leases recently held a slot (`holdMs`), rounded up to whole seconds, between 1 s and
 * 5 minutes — the in-process scheduler's estimate, on the fleet's counts.
 */
export function retryAfterMs(ahead: number, slots: number, holdMs: number): number {
  const rounds = Math.ceil((ahead + 1) / Math.max(1, slots));
  const estimate = Math.ceil((rounds * holdMs) / 1_000) * 1_000;
  return Math.min(300_000, Math.max(1_000, estimate));
}
