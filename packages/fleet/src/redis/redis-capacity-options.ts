import { describeValue } from '@sluice/protocol';

/** What a daemon does while the fleet's Redis is unreachable. */
export type FleetOutagePolicy = 'local' | 'refuse';

/** The limits one pool (provider/model) shares across the fleet. */
export interface SharedLimits {
  maxConcurrency: number;
  maxQueued: number;
  maxInflight: number;
}

/** How a {@link RedisCapacity} reaches its fleet. */
export interface RedisCapacityOptions {
  /** `redis://[user:password@]host[:port][/db]` or `rediss://…`. */
  url: string;
  /** Namespaces every key and channel, so several fleets share one Redis; default `sluice`. */
  fleetName?: string;
  /** While Redis is unreachable: this node's share of the limits, or refuse; default `local`. */
  onOutage?: FleetOutagePolicy;
  /** A node that has not renewed its leases for this long is dead; renewal runs every third of it. Default 3000. */
  leaseTtlMs?: number;
  /** Admissions per minute per pool, fleet-wide (sliding window); 0 or absent: none. */
  requestsPerMinute?: number;
  /** Tokens per minute per pool, fleet-wide, counted when calls end; 0 or absent: none. */
  tokensPerMinute?: number;
  /** This node's id in the fleet; default: host, pid and random bits. */
  nodeId?: string;
  /** How long a command may wait for Redis before the node counts it as an outage; default 2000. */
  commandTimeoutMs?: number;
  /**
   * The time every script runs at, in ms; default: the Redis server's own clock, which all
   * nodes share. Tests pass an explicit clock to drive lease expiry without sleeping.
   */
  now?: () => number;
  /** Where outages, recoveries and lost leases are reported. */
  log?: FleetLog;
}

/** The few log lines the fleet backend writes; never any prompt content. */
export interface FleetLog {
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

/** The options with defaults applied and every value checked. */
export interface ResolvedRedisCapacityOptions {
  url: string;
  fleetName: string;
  onOutage: FleetOutagePolicy;
  leaseTtlMs: number;
  requestsPerMinute: number;
  tokensPerMinute: number;
  nodeId: string | undefined;
  commandTimeoutMs: number;
}

const FLEET_NAME = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Applies defaults and validates; a bad value throws a RangeError that names it and says what
 * to use instead, so a misconfigured daemon fails at start-up.
 */
export function resolveRedisCapacityOptions(options: RedisCapacityOptions): ResolvedRedisCapacityOptions {
  return {
    url: redisUrl(options.url),
    fleetName: fleetName(options.fleetName ?? 'sluice'),
    onOutage: outagePolicy(options.onOutage ?? 'local'),
    leaseTtlMs: integerAtLeast('fleetLeaseTtlMs', options.leaseTtlMs ?? 3_000, 30),
    requestsPerMinute: integerAtLeast('fleetRequestsPerMinute', options.requestsPerMinute ?? 0, 0),
    tokensPerMinute: integerAtLeast('fleetTokensPerMinute', options.tokensPerMinute ?? 0, 0),
    nodeId: options.nodeId === undefined ? undefined : fleetName(options.nodeId, 'nodeId'),
    commandTimeoutMs: integerAtLeast('fleetCommandTimeoutMs', options.commandTimeoutMs ?? 2_000, 1),
  };
}

/** A `redis://` or `rediss://` URL with a host; anything else is refused with its value. */
export function redisUrl(value: unknown): string {
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'redis:' && url.protocol !== 'rediss:') || url.hostname === '')
    throw new RangeError(
      `fleetRedis must be a redis:// or rediss:// URL with a host (e.g. redis://127.0.0.1:6379), got ${describeValue(value)}`,
    );
  return value as string;
}

/** A fleet name: 1–64 letters, digits, `.`, `_` or `-` (it becomes part of every key). */
export function fleetName(value: unknown, name = 'fleetName'): string {
  if (typeof value === 'string' && FLEET_NAME.test(value)) return value;
  throw new RangeError(`${name} must be 1-64 letters, digits, ".", "_" or "-", got ${describeValue(value)}`);
}

/** `local` or `refuse`. */
export function outagePolicy(value: unknown): FleetOutagePolicy {
  if (value === 'local' || value === 'refuse') return value;
  throw new RangeError(`fleetOnOutage must be "local" or "refuse", got ${describeValue(value)}`);
}

function integerAtLeast(name: string, value: unknown, min: number): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min) return value;
  throw new RangeError(`${name} must be an integer >= ${min}, got ${describeValue(value)}`);
}
