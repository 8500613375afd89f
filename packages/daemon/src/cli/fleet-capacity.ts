import type { CapacityPort, Job } from '@sluice/runtime';
import type { ResolvedDaemonConfig } from '../config.js';

/** Where the fleet backend reports outages and recoveries: the operator's log. */
export interface FleetLogSink {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

/**
 * The Redis capacity port of `--fleet-redis` (docs/fleet.md). `@sluice/fleet/redis` and its
 * Redis client are imported here only, so a single-node daemon never loads them. Waits for
 * Redis up to its command timeout; an unreachable Redis is logged and the daemon starts in
 * outage mode (`--fleet-on-outage`) — it does not refuse to start, as nodes of a fleet restart
 * independently of it.
 */
export async function fleetCapacity(
  config: ResolvedDaemonConfig,
  log: FleetLogSink | undefined,
): Promise<CapacityPort<Job>> {
  const { RedisCapacity } = await import('@sluice/fleet/redis');
  const capacity = new RedisCapacity({
    url: config.fleetRedis!,
    ...(config.fleetName === undefined ? {} : { fleetName: config.fleetName }),
    ...(config.fleetOnOutage === undefined ? {} : { onOutage: config.fleetOnOutage }),
    ...(config.fleetLeaseTtlMs === undefined ? {} : { leaseTtlMs: config.fleetLeaseTtlMs }),
    ...(config.fleetRequestsPerMinute === undefined
      ? {}
      : { requestsPerMinute: config.fleetRequestsPerMinute }),
    ...(config.fleetTokensPerMinute === undefined ? {} : { tokensPerMinute: config.fleetTokensPerMinute }),
    ...(log === undefined ? {} : { log }),
  });
  if (await capacity.connected()) {
    const { fleetName, leaseTtlMs } = capacity.options;
    log?.info({ fleetName, nodeId: capacity.nodeId, leaseTtlMs }, 'fleet: model limits shared through Redis');
  } else
    log?.warn(
      { fleetName: capacity.options.fleetName, onOutage: capacity.options.onOutage },
      'fleet: Redis unreachable at start-up; the outage policy applies until it answers',
    );
  return capacity;
}
