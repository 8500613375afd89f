import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { FleetCapacityReport, ModelLimits } from '@sluice/protocol';
import { OverloadedError, type CapacityEvents, type CapacityPort, type Job } from '@sluice/runtime';
import { FleetConnection } from './fleet-connection.js';
import { fleetPrefix, poolPrefix } from './fleet-keys.js';
import { LocalShare } from './local-share.js';
import { PoolBatch } from './pool-batch.js';
import {
  resolveRedisCapacityOptions,
  type FleetLog,
  type RedisCapacityOptions,
  type ResolvedRedisCapacityOptions,
} from './redis-capacity-options.js';
import { Renewal, type RenewedPool } from './renewal.js';
import { retryAfterMs } from './retry-after.js';
import { UnsentTransitions } from './unsent-transitions.js';

/** Where one claim stands, as this node knows it. */
type ClaimState = 'pending' | 'queued' | 'slot' | 'cleaning';

/** A job's lease, in Redis or — admitted during an outage — in this node's local share. */
interface Claim {
  readonly job: Job;
  readonly pool: PoolEntry;
  readonly local: boolean;
  state: ClaimState;
  /** A grant that arrived before the admission's reply. */
  grantedEarly: boolean;
  /** When it got its slot (performance.now()), for the Retry-After estimate. */
  slotSince: number;
}

/** A pool this node holds leases in: its key prefix and its queued leases, for the renewal. */
interface PoolEntry {
  readonly name: string;
  readonly prefix: string;
  claims: number;
  readonly queued: Set<string>;
  readonly batch: PoolBatch;
}

/**
 * The scheduler's capacity held in Redis for a whole fleet (issue 21; docs/fleet.md): every
 * slot, queue place and in-flight unit of a provider/model is a lease owned by a node, moved
 * by one Lua script per transition — one round trip per admission, leave and release. A node
 * renews all its leases with one script every third of the lease TTL; a node that stops
 * renewing is dead, and the next script to run in its pools frees its leases. Queued leases
 * learn their grant on the node's channel, or at the next renewal if the message was lost.
 * While Redis is unreachable the node applies its share of the limits, or refuses.
 */
export class RedisCapacity implements CapacityPort<Job> {
  readonly nodeId: string;
  readonly options: ResolvedRedisCapacityOptions;
  private readonly fleet: string;
  private readonly connection: FleetConnection;
  private readonly renewal: Renewal;
  private readonly claims = new Map<string, Claim>();
  private readonly pools = new Map<string, PoolEntry>();
  private readonly unsent = new UnsentTransitions();
  private readonly batches = new Map<string, PoolBatch>();
  private readonly now: (() => number) | undefined;
  private readonly log: FleetLog | undefined;
  private events: CapacityEvents<Job> | undefined;
  private limits: Readonly<ModelLimits> | undefined;
  private local: LocalShare | undefined;
  private nodes = 1;
  private outageSince: number | undefined = Date.now();
  /** How long leases recently held a slot (ms, smoothed), for Retry-After. */
  private slotHoldMs = 0;

  constructor(options: RedisCapacityOptions) {
    this.options = resolveRedisCapacityOptions(options);
    this.nodeId = this.options.nodeId ?? `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
    this.fleet = fleetPrefix(this.options.fleetName);
    this.now = options.now;
    this.log = options.log;
    this.connection = new FleetConnection(
      this.options.url,
      `${this.fleet}grants:${this.nodeId}`,
      this.options.commandTimeoutMs,
      {
        up: () => this.connectionUp(),
        down: (reason) => this.connectionDown(reason),
        grant: (leaseId) => this.granted(leaseId),
      },
    );
    this.renewal = new Renewal(this.connection, this.fleet, this.nodeId, this.options.leaseTtlMs, {
      now: this.now,
      pools: () => this.renewedPools(),
      renewed: (nodes, pools) => this.applyRenewal(nodes, pools),
      flush: () => this.flushUnsent(),
    });
  }

  /** Waits up to `timeoutMs` for Redis; false means the node starts in outage mode. */
  connected(timeoutMs: number = this.options.commandTimeoutMs): Promise<boolean> {
    return this.connection.ready(timeoutMs);
  }

  /** The local port of the command connection (to count its commands in tests). */
  get commandPort(): number | undefined {
    return this.connection.localPort;
  }

  bind(events: CapacityEvents<Job>, limits: Readonly<ModelLimits>): void {
    if (this.events !== undefined) throw new Error('RedisCapacity is bound to a scheduler already');
    this.events = events;
    this.limits = limits;
    this.local = new LocalShare(limits, events, (ahead, slots) =>
      retryAfterMs(ahead, slots, this.slotHoldMs),
    );
    this.local.setNodes(this.nodes);
    this.renewal.start();
  }

  acquire(job: Job, poolName: string): Promise<boolean> {
    const limits = this.limits;
    if (limits === undefined) return Promise.reject(new Error('RedisCapacity is not bound to a scheduler'));
    if (!this.connection.isConnected) return this.acquireInOutage(job, poolName);
    const pool = this.pool(poolName);
    const claim: Claim = { job, pool, local: false, state: 'pending', grantedEarly: false, slotSince: 0 };
    this.claims.set(job.callId, claim);
    pool.claims++;
    return pool.batch.push('a', job.callId).then(
      (reply) => this.admitted(claim, reply, limits),
      (error: unknown) => {
        // The script may have run although its reply is lost: release the lease to be sure.
        this.forget(claim);
        this.unsent.add(job.callId, pool.batch, true, 0);
        this.log?.warn({ error: (error as Error).message }, 'fleet admission failed; outage policy applies');
        return this.acquireInOutage(job, poolName);
      },
    );
  }

  leave(job: Job): void {
    const claim = this.claims.get(job.callId);
    if (claim === undefined || claim.state === 'cleaning') return;
    const wasSlot = claim.state === 'slot';
    claim.state = 'cleaning';
    if (claim.local) return this.local!.leave(job, claim.pool.name);
    claim.pool.queued.delete(job.callId);
    if (wasSlot) this.slotHeld(claim);
    const { pool } = claim;
    pool.batch.push('l', job.callId).catch(() => this.unsent.add(job.callId, pool.batch, false, 0));
  }

  release(job: Job): void {
    const claim = this.claims.get(job.callId);
    if (claim === undefined) return;
    if (claim.state === 'slot') this.slotHeld(claim);
    this.forget(claim);
    if (claim.local) return this.local!.release(job, claim.pool.name);
    const tokens = job.usedTokens;
    const { pool } = claim;
    pool.batch
      .push('r', job.callId, tokens)
      .catch(() => this.unsent.add(job.callId, pool.batch, true, tokens));
  }

  report(): FleetCapacityReport {
    const connected = this.connection.isConnected;
    const report: FleetCapacityReport = {
      backend: 'redis',
      fleetName: this.options.fleetName,
      nodeId: this.nodeId,
      mode: connected ? 'shared' : this.options.onOutage === 'local' ? 'local' : 'refusing',
      connected,
      nodes: this.nodes,
      leaseTtlMs: this.options.leaseTtlMs,
    };
    if (this.outageSince !== undefined) report.outageSince = new Date(this.outageSince).toISOString();
    if (!connected && this.options.onOutage === 'local' && this.local) report.localLimits = this.local.limits;
    return report;
  }

  async close(): Promise<void> {
    this.renewal.stop();
    if (this.connection.isConnected) {
      await this.flushUnsent();
      await this.connection.commands.zrem(`${this.fleet}members`, this.nodeId).catch(() => {});
    }
    await this.connection.close();
  }

  private admitted(claim: Claim, reply: string, limits: Readonly<ModelLimits>): boolean {
    const [outcome, first, second] = reply.split(' ');
    const count = Number(first);
    const id = claim.job.callId;
    if (outcome === 'granted' || (outcome === 'queued' && claim.grantedEarly)) {
      claim.state = 'slot';
      claim.slotSince = performance.now();
      return true;
    }
    if (outcome === 'queued') {
      claim.state = 'queued';
      claim.pool.queued.add(id);
      return false;
    }
    this.forget(claim);
    if (outcome === 'RateLimited')
      throw new OverloadedError(
        'RateLimited',
        count,
        Math.max(1_000, Math.ceil(Number(second) / 1_000) * 1_000),
      );
    const slots = limits.maxConcurrency;
    if (outcome === 'InflightFull')
      throw new OverloadedError(
        'InflightFull',
        limits.maxInflight,
        retryAfterMs(count, slots, this.slotHoldMs),
      );
    throw new OverloadedError('QueueFull', limits.maxQueued, retryAfterMs(count, slots, this.slotHoldMs));
  }

  private acquireInOutage(job: Job, poolName: string): Promise<boolean> {
    if (this.options.onOutage === 'refuse') return Promise.reject(new OverloadedError('FleetUnavailable', 0));
    try {
      const granted = this.local!.acquire(job, poolName);
      // Held here, not in Redis: not renewed, not counted with the pool's Redis leases.
      const prefix = poolPrefix(this.fleet, poolName);
      const pool: PoolEntry = {
        name: poolName,
        prefix,
        claims: 0,
        queued: new Set(),
        batch: this.batchOf(prefix),
      };
      const state = granted ? 'slot' : 'queued';
      const claim: Claim = {
        job,
        pool,
        local: true,
        state,
        grantedEarly: false,
        slotSince: performance.now(),
      };
      this.claims.set(job.callId, claim);
      return Promise.resolve(granted);
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  /** A grant message: a queued lease holds a slot now. */
  private granted(leaseId: string): void {
    const claim = this.claims.get(leaseId);
    if (claim === undefined || claim.local) return; // released meanwhile: its release freed the slot
    if (claim.state === 'pending') claim.grantedEarly = true;
    else if (claim.state === 'queued') this.grant(claim);
  }

  private grant(claim: Claim): void {
    claim.state = 'slot';
    claim.slotSince = performance.now();
    claim.pool.queued.delete(claim.job.callId);
    this.events!.granted(claim.job);
  }

  private renewedPools(): RenewedPool[] {
    const renewed: RenewedPool[] = [];
    for (const pool of this.pools.values())
      renewed.push({
        prefix: pool.prefix,
        maxConcurrency: this.limits!.maxConcurrency,
        queued: [...pool.queued],
      });
    return renewed;
  }

  /** What a renewal found: the live node count, and per pool the state of each queued lease. */
  private applyRenewal(
    nodes: number,
    pools: Array<{ prefix: string; known: boolean; states: Map<string, string> }>,
  ): void {
    this.nodes = Math.max(1, nodes);
    this.local?.setNodes(this.nodes);
    for (const { prefix, known, states } of pools) {
      let lost = 0;
      for (const [id, state] of states) {
        const claim = this.claims.get(id);
        if (claim?.state !== 'queued') continue;
        if (state === 's') this.grant(claim);
        else if (state === 'x') {
          lost++;
          this.events!.lost(claim.job, new OverloadedError('FleetUnavailable', 0));
        }
      }
      if (!known && lost > 0)
        this.log?.warn(
          { nodeId: this.nodeId, pool: prefix, lost },
          'fleet leases of this node were reclaimed',
        );
    }
  }

  private pool(name: string): PoolEntry {
    let pool = this.pools.get(name);
    if (pool === undefined) {
      const prefix = poolPrefix(this.fleet, name);
      pool = { name, prefix, claims: 0, queued: new Set(), batch: this.batchOf(prefix) };
      this.pools.set(name, pool);
    }
    return pool;
  }

  /** The batch of the pool with `prefix`, kept for the port's life: pools are few (one per model). */
  private batchOf(prefix: string): PoolBatch {
    let batch = this.batches.get(prefix);
    if (batch === undefined) {
      const o = this.options;
      batch = new PoolBatch((transitions) => {
        const limits = this.limits!;
        return this.connection.commands.sluiceBatch(
          this.fleet,
          prefix,
          this.at(),
          o.leaseTtlMs,
          this.nodeId,
          limits.maxConcurrency,
          limits.maxQueued,
          limits.maxInflight,
          o.requestsPerMinute,
          o.tokensPerMinute,
          ...transitions,
        );
      });
      this.batches.set(prefix, batch);
    }
    return batch;
  }

  private forget(claim: Claim): void {
    const id = claim.job.callId;
    if (this.claims.get(id) !== claim) return;
    this.claims.delete(id);
    if (claim.local) return;
    const pool = claim.pool;
    pool.queued.delete(id);
    if (--pool.claims === 0) this.pools.delete(pool.name);
  }

  /** Sends again the leaves and releases whose replies were lost, while Redis answers. */
  private async flushUnsent(): Promise<void> {
    if (this.connection.isConnected) await this.unsent.flush();
  }

  private slotHeld(claim: Claim): void {
    const held = performance.now() - claim.slotSince;
    this.slotHoldMs = this.slotHoldMs === 0 ? held : this.slotHoldMs + (held - this.slotHoldMs) / 8;
  }

  private at(): number | string {
    return this.now === undefined ? '' : this.now();
  }

  private connectionUp(): void {
    if (this.outageSince !== undefined && this.events !== undefined)
      this.log?.info({ fleet: this.options.fleetName }, 'fleet Redis reachable; limits shared again');
    this.outageSince = undefined;
    void this.flushUnsent();
    this.renewal.renewSoon();
  }

  private connectionDown(reason: string): void {
    this.outageSince ??= Date.now();
    this.log?.warn(
      { fleet: this.options.fleetName, reason, onOutage: this.options.onOutage },
      this.options.onOutage === 'local'
        ? "fleet Redis unreachable; applying this node's share of the limits"
        : 'fleet Redis unreachable; refusing model calls',
    );
  }
}
