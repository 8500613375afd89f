import { DaemonPendingPromptLimitError } from './errors.js';

/** Gives a reservation back; calling it again does nothing (each slot is released once). */
export type ReleaseReservation = () => void;

const NOOP: ReleaseReservation = () => {};

/**
 * The local per-session prompt counter of one client (SPEC BP-11). `reserve` decides
 * synchronously — refuse or count — so concurrent callers can never overshoot the limit,
 * and the returned release function decrements at most once.
 */
export class PromptReservations {
  private readonly counts = new Map<string, number>();

  /** Counts one prompt for `sessionId` or throws {@link DaemonPendingPromptLimitError}. */
  reserve(sessionId: string, limit: number): ReleaseReservation {
    if (limit === Infinity) return NOOP;
    const pending = this.counts.get(sessionId) ?? 0;
    if (pending >= limit) throw new DaemonPendingPromptLimitError(sessionId, limit, pending, { local: true });
    this.counts.set(sessionId, pending + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = (this.counts.get(sessionId) ?? 0) - 1;
      if (now <= 0) this.counts.delete(sessionId);
      else this.counts.set(sessionId, now);
    };
  }

  /** Prompts currently reserved for `sessionId`. */
  count(sessionId: string): number {
    return this.counts.get(sessionId) ?? 0;
  }

  /** Prompts currently reserved over all sessions. */
  total(): number {
    let sum = 0;
    for (const value of this.counts.values()) sum += value;
    return sum;
  }
}
