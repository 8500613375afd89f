import type { Clock, ErrorReporter, TimerHandle } from '@sluice/runtime';
import type { Sql } from 'postgres';
import { StoreLeaseLostError } from './errors.js';

/** What a {@link NodeLease} is made of. */
export interface NodeLeaseParts {
  sql: Sql;
  /** The store's URL without its password, for messages. */
  store: string;
  nodeId: string;
  advertiseUrl: string | undefined;
  leaseMs: number;
  /** Wall-clock epoch milliseconds; every node's lease is written and read in these. */
  wallNow: () => number;
  /** Schedules the renewals. */
  clock: Clock;
  /** Runs after each renewal: the settling of nodes found dead. */
  afterRenewal: () => Promise<unknown>;
  /** Told once, when the lease is found lost (another node settled this one). */
  onLost: (error: StoreLeaseLostError) => void;
  reportError: ErrorReporter;
}

/**
 * This daemon's row in `sluice_nodes`: written at start, renewed every third of its lease, and
 * removed at a clean stop. A node whose row expired is dead to the others: the first to see it
 * settles its open model calls and frees its sessions in one transaction, which also removes
 * the row, so a node that was only paused finds its lease lost and writes nothing more.
 */
export class NodeLease {
  private timer: TimerHandle | undefined;
  private ticking: Promise<void> | undefined;
  private lostError: StoreLeaseLostError | undefined;
  private stopped = false;

  constructor(private readonly parts: NodeLeaseParts) {}

  /** The error every write gets once the lease is lost; `undefined` while it holds. */
  get lost(): StoreLeaseLostError | undefined {
    return this.lostError;
  }

  /** Marks the lease lost (a write found this node's row gone); tells `onLost` once. */
  loseLease(): StoreLeaseLostError {
    if (this.lostError === undefined) {
      this.lostError = new StoreLeaseLostError(this.parts.store, this.parts.nodeId);
      if (this.timer !== undefined) this.parts.clock.clearTimer(this.timer);
      this.timer = undefined;
      this.parts.onLost(this.lostError);
    }
    return this.lostError;
  }

  /** Writes the node's row and starts renewing it. */
  async start(): Promise<void> {
    const { sql, nodeId, advertiseUrl, leaseMs, wallNow } = this.parts;
    const now = wallNow();
    await sql`INSERT INTO sluice_nodes (node_id, advertise_url, started_at, expires_at)
      VALUES (${nodeId}, ${advertiseUrl ?? null}, ${now}, ${now + leaseMs})`;
    this.schedule();
  }

  /**
   * Renews the lease, then runs `afterRenewal`; resolves `false` when the lease was lost. One
   * tick at a time: a tick called while one runs shares it.
   */
  async tick(): Promise<boolean> {
    this.ticking ??= this.renewAndSettle().finally(() => (this.ticking = undefined));
    await this.ticking;
    return this.lostError === undefined;
  }

  /**
   * Stops renewing. `clean`: the node's calls all have results, so its row is removed (freeing
   * its sessions at once); otherwise the row is left expired, for the next sweep to settle.
   */
  async stop(clean: boolean): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.parts.clock.clearTimer(this.timer);
    this.timer = undefined;
    await this.ticking;
    if (this.lostError !== undefined) return;
    const { sql, nodeId } = this.parts;
    if (clean) await sql`DELETE FROM sluice_nodes WHERE node_id = ${nodeId}`;
    else await sql`UPDATE sluice_nodes SET expires_at = 0 WHERE node_id = ${nodeId}`;
  }

  private schedule(): void {
    if (this.stopped || this.lostError !== undefined) return;
    const { clock, leaseMs } = this.parts;
    this.timer = clock.setTimer(
      () => {
        this.timer = undefined;
        void this.tick().then(() => this.schedule());
      },
      Math.max(1, Math.floor(leaseMs / 3)),
    );
    (this.timer as { unref?: () => void } | undefined)?.unref?.();
  }

  private async renewAndSettle(): Promise<void> {
    if (this.lostError !== undefined || this.stopped) return;
    const { sql, nodeId, leaseMs, wallNow } = this.parts;
    try {
      const renewed = await sql`UPDATE sluice_nodes SET expires_at = ${wallNow() + leaseMs}
        WHERE node_id = ${nodeId} RETURNING 1`;
      if (renewed.length === 0) {
        this.loseLease();
        return;
      }
      await this.parts.afterRenewal();
    } catch (error) {
      // The database is away for now; the lease holds until it expires, and the next tick retries.
      this.parts.reportError(error);
    }
  }
}
