import type { TotalSlotsReport } from '@sluice/protocol';

/** A scheduler whose slots count against a {@link TotalSlotCap}, as the cap sees it. */
export interface CapMember {
  /**
   * The admission time of the call this member would start next with a slot of the cap — its
   * queue's head, else its longest waiter — or undefined when it has none or no slot of its own.
   */
  nextInLine(): number | undefined;
  /**
   * Starts that call now with a slot — or turns it away when its deadline passed, so that each
   * step either takes a slot or shortens a line.
   */
  startNext(now: number): void;
}

/**
 * A cap on the execution slots of several schedulers together — the daemon-wide cap over all
 * models' calls (`--model-max-concurrency-total`, docs/decisions/037). Held in process and
 * decided synchronously: a scheduler takes a slot of the cap with its own, and a call that finds
 * the cap full waits in its own model's queue (or among its waiters), under that model's bounds
 * and with its deadline running. A slot given back goes to the member whose next call was
 * admitted first (by the clock's ms; calls admitted in the same ms take turns, member by member).
 */
export class TotalSlotCap {
  private used = 0;
  private readonly members: CapMember[] = [];
  private granting = false;
  /** The member served last: ties go round the members from the next one. */
  private served = -1;

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`the total slot cap must be a positive integer, got ${String(limit)}`);
  }

  /** Slots of the cap held now. */
  get inUse(): number {
    return this.used;
  }

  /** Whether one more slot fits under the cap. */
  get hasRoom(): boolean {
    return this.used < this.limit;
  }

  /** `member` takes slots of this cap from now on. */
  join(member: CapMember): void {
    this.members.push(member);
  }

  /** A member took a slot. */
  take(): void {
    this.used++;
  }

  /** A member gave its slot back; {@link grant} hands it on. */
  give(): void {
    this.used--;
  }

  /**
   * Hands free slots of the cap to the members' next calls, earliest admitted first, while
   * there is room. Re-entered from a call it starts (a call that ends at once), it leaves the
   * loop to the outer run, which sees the new room.
   */
  grant(now: number): void {
    if (this.granting) return;
    this.granting = true;
    try {
      while (this.used < this.limit) {
        const member = this.earliest();
        if (member === undefined) return;
        member.startNext(now);
      }
    } finally {
      this.granting = false;
    }
  }

  /** What the snapshot shows: the slots held and the cap. */
  report(): TotalSlotsReport {
    return { used: this.used, limit: this.limit };
  }

  /** The member whose next call was admitted first; on a tie, the next one after the last served. */
  private earliest(): CapMember | undefined {
    const members = this.members;
    let best = -1;
    let bestAt = Infinity;
    for (let step = 1; step <= members.length; step++) {
      const index = (this.served + step) % members.length;
      const at = members[index]!.nextInLine();
      if (at !== undefined && at < bestAt) {
        best = index;
        bestAt = at;
      }
    }
    if (best < 0) return undefined;
    this.served = best;
    return members[best];
  }
}
