import type { FleetConnection } from './fleet-connection.js';

/** One pool a renewal covers: its key prefix, its slots, and the leases the node believes queued. */
export interface RenewedPool {
  prefix: string;
  maxConcurrency: number;
  queued: string[];
}

/** What a renewal found in one pool. */
export interface RenewalFinding {
  prefix: string;
  /** False when the node had been declared dead there and its leases reclaimed. */
  known: boolean;
  /** Each queued lease's state now: `q`, `s` (granted), `c`, or `x` (gone). */
  states: Map<string, string>;
}

/** What the renewal asks of its owner and tells it. */
export interface RenewalHooks {
  /** The explicit clock of the scripts, if any (tests). */
  now: (() => number) | undefined;
  pools(): RenewedPool[];
  renewed(nodes: number, findings: RenewalFinding[]): void;
  /** Sends leaves and releases whose replies were lost. */
  flush(): Promise<void>;
}

/**
 * The node's one renewal timer (issue 21): every third of the lease TTL, a single script
 * renews the node in the fleet and in every pool it holds leases in, reclaims dead nodes
 * there, and reports which of its queued leases were granted meanwhile. Missing two renewals
 * in a row still leaves a third before the TTL runs out.
 */
export class Renewal {
  private timer: ReturnType<typeof setInterval> | undefined;
  private running = false;

  constructor(
    private readonly connection: FleetConnection,
    private readonly fleet: string,
    private readonly nodeId: string,
    private readonly leaseTtlMs: number,
    private readonly hooks: RenewalHooks,
  ) {}

  /** The renewal interval: a third of the lease TTL. */
  get intervalMs(): number {
    return Math.max(10, Math.floor(this.leaseTtlMs / 3));
  }

  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.renew(), this.intervalMs);
    this.timer.unref();
    void this.renew();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Renews now (after a reconnection), unless a renewal is under way or the timer stopped. */
  renewSoon(): void {
    if (this.timer !== undefined) void this.renew();
  }

  /** One renewal; a failed one is simply tried again at the next tick. */
  async renew(): Promise<void> {
    if (this.running || !this.connection.isConnected) return;
    this.running = true;
    try {
      const pools = this.hooks.pools();
      const args: Array<string | number> = [
        this.hooks.now?.() ?? '',
        this.leaseTtlMs,
        this.nodeId,
        pools.length,
      ];
      for (const pool of pools)
        args.push(pool.prefix, pool.maxConcurrency, pool.queued.length, ...pool.queued);
      const reply = await this.connection.commands.sluiceRenew(this.fleet, ...args);
      const findings = pools.map((pool, index): RenewalFinding => {
        const states = String(reply[index + 1] ?? '1');
        return {
          prefix: pool.prefix,
          known: states[0] === '1',
          states: new Map(pool.queued.map((id, i) => [id, states[i + 1] ?? 'x'])),
        };
      });
      this.hooks.renewed(Number(reply[0]), findings);
      await this.hooks.flush();
    } catch {
      // Unreachable or slow: the connection's own events switch the outage mode.
    } finally {
      this.running = false;
    }
  }
}
