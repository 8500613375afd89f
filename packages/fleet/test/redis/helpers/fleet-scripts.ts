import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { BATCH_LUA, RENEW_LUA, fleetPrefix, poolPrefix } from '../../../src/index.js';

/** The Redis every fleet test uses (nothing persisted there). */
export const REDIS_URL = process.env['SLUICE_TEST_REDIS'] ?? 'redis://127.0.0.1:6379';

/**
 * `vi.waitFor` options for a condition that crosses the real Redis: its default second is short
 * when other test files keep the 2-core CI machine and Redis busy.
 */
export const REDIS_WAIT = { timeout: 10_000 };

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
  tBatch(fleet: string, pool: string, ...args: Array<string | number>): Promise<string[]>;
  tRenew(fleet: string, ...args: Array<string | number>): Promise<Array<string | number>>;
}

/** One transition of a batch: admit (by `node`), leave or release. */
export type Transition = ['a', string] | ['l', string] | ['r', string, number?];

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
    this.redis.defineCommand('tBatch', { numberOfKeys: 2, lua: BATCH_LUA });
    this.redis.defineCommand('tRenew', { numberOfKeys: 1, lua: RENEW_LUA });
    this.fleet = fleetPrefix(fleetName);
    this.pool = poolPrefix(this.fleet, poolName);
  }

  /** Runs `transitions` of `node` in one script, in order; replies one string each. */
  batch(now: number, node: string, transitions: Transition[]): Promise<string[]> {
    const l = this.limits;
    const args = transitions.flatMap(([kind, id, tokens]) => [kind, id, tokens ?? 0]);
    return this.redis.tBatch(
      this.fleet,
      this.pool,
      now,
      this.ttlMs,
      node,
      l.maxConcurrency,
      l.maxQueued,
      l.maxInflight,
      l.rpm ?? 0,
      l.tpm ?? 0,
      ...args,
    );
  }

  /** Admits `id` for `node`: `[outcome, count or limit, wait ms]`. */
  async admit(now: number, node: string, id: string): Promise<Reply> {
    const [reply] = await this.batch(now, node, [['a', id]]);
    const [outcome, first, second] = reply!.split(' ');
    return [outcome!, Number(first), Number(second ?? 0)];
  }

  /** `id` gives back its slot or queue place; replies the lease ids granted a slot. */
  async leave(now: number, id: string): Promise<string[]> {
    return granted(await this.batch(now, '', [['l', id]]));
  }

  /** `id` is done; replies the lease ids granted a slot. */
  async release(now: number, id: string, tokens = 0): Promise<string[]> {
    return granted(await this.batch(now, '', [['r', id, tokens]]));
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

function granted([reply]: string[]): string[] {
  return reply ? reply.split(' ') : [];
}
