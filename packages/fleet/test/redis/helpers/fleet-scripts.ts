import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { ADMIT_LUA, LEAVE_LUA, RELEASE_LUA, RENEW_LUA, fleetPrefix, poolPrefix } from '../../../src/index.js';

/** The Redis every fleet test uses (nothing persisted there). */
export const REDIS_URL = process.env['SLUICE_TEST_REDIS'] ?? 'redis://127.0.0.1:6379';

/** A fleet name no other test run shares. */
export function randomFleetName(): string {
  return `test-${randomBytes(6).toString('hex')}`;
}

/** Limits of one pool, as the scripts take them. */
export interface PoolLimits {
  maxConcurrency: number;
  maxQueued: number;
  maxInflight: number;
  rpm?: number;
  tpm?: number;
}

type Reply = [string, number, number];

interface Commands {
  tAdmit(fleet: string, pool: string, ...args: Array<string | number>): Promise<Reply>;
  tLeave(fleet: string, pool: string, ...args: Array<string | number>): Promise<string[]>;
  tRelease(fleet: string, pool: string, ...args: Array<string | number>): Promise<string[]>;
  tRenew(fleet: string, ...args: Array<string | number>): Promise<Array<string | number>>;
}

/**
 * The capacity scripts of one pool, called directly with an explicit clock: what each node's
 * port sends, without the port. `ttlMs` is the lease TTL every admission and renewal passes.
 */
export class PoolScripts {
  readonly redis: Redis & Commands;
  readonly fleet: string;
  readonly pool: string;

  constructor(
    readonly fleetName: string,
    readonly limits: PoolLimits,
    readonly ttlMs = 3_000,
    poolName = 'openai/test-model',
  ) {
    this.redis = new Redis(REDIS_URL, { lazyConnect: false }) as Redis & Commands;
    this.redis.defineCommand('tAdmit', { numberOfKeys: 2, lua: ADMIT_LUA });
    this.redis.defineCommand('tLeave', { numberOfKeys: 2, lua: LEAVE_LUA });
    this.redis.defineCommand('tRelease', { numberOfKeys: 2, lua: RELEASE_LUA });
    this.redis.defineCommand('tRenew', { numberOfKeys: 1, lua: RENEW_LUA });
    this.fleet = fleetPrefix(fleetName);
    this.pool = poolPrefix(this.fleet, poolName);
  }

  admit(now: number, node: string, id: string): Promise<Reply> {
    const l = this.limits;
    return this.redis.tAdmit(
      this.fleet,
      this.pool,
      now,
      this.ttlMs,
      id,
      node,
      l.maxConcurrency,
      l.maxQueued,
      l.maxInflight,
      l.rpm ?? 0,
      l.tpm ?? 0,
    );
  }

  leave(now: number, id: string): Promise<string[]> {
    return this.redis.tLeave(this.fleet, this.pool, now, id, this.limits.maxConcurrency);
  }

  release(now: number, id: string, tokens = 0): Promise<string[]> {
    return this.redis.tRelease(this.fleet, this.pool, now, id, this.limits.maxConcurrency, tokens);
  }

  /** One node's renewal of this pool; replies the node count and the states of `queued`. */
  async renew(
    now: number,
    node: string,
    queued: string[] = [],
  ): Promise<{ nodes: number; known: boolean; states: string }> {
    const reply = await this.redis.tRenew(
      this.fleet,
      now,
      this.ttlMs,
      node,
      1,
      this.pool,
      this.limits.maxConcurrency,
      queued.length,
      ...queued,
    );
    const pool = String(reply[1]);
    return { nodes: Number(reply[0]), known: pool[0] === '1', states: pool.slice(1) };
  }

  /** The pool as Redis holds it: slots used, queue in order, and each lease's state letter. */
  async state(): Promise<{ used: number; queue: string[]; leases: Map<string, string>; seq: number }> {
    const [used, seq] = await this.redis.hmget(`${this.pool}meta`, 'used', 'seq');
    const queue = await this.redis.zrange(`${this.pool}queue`, 0, -1);
    const all = await this.redis.hgetall(`${this.pool}leases`);
    return {
      used: Number(used ?? 0),
      seq: Number(seq ?? 0),
      queue,
      leases: new Map(Object.entries(all).map(([id, value]) => [id, value[0]!])),
    };
  }

  /** Deletes every key of the fleet and closes the connection. */
  async close(): Promise<void> {
    await deleteFleet(this.redis, this.fleetName);
    this.redis.disconnect();
  }
}

/** Deletes every key of fleet `name`. */
export async function deleteFleet(redis: Redis, name: string): Promise<void> {
  const keys = await redis.keys(`${fleetPrefix(name).replace(/[{}]/g, '\\$&')}*`);
  if (keys.length > 0) await redis.del(...keys);
}
