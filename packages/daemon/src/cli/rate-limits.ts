import type { RateLimitOptions } from '../http/index.js';
import type { FleetLogSink } from './fleet-capacity.js';
import type { ServeOptions } from './serve.js';

/** `--rate-limit`'s options for the server, and what to close when it stops. */
export interface ServeRateLimit {
  options: RateLimitOptions | undefined;
  close(): Promise<void>;
}

/**
 * The per-client rate limits the flags ask for (docs/decisions/035): none without
 * `--rate-limit`; with `--fleet-redis` too, counted in that Redis so that every daemon of the
 * fleet shares them (`@sluice/fleet/redis` is loaded only then); the server listens once that
 * Redis answers, or after its command timeout (then requests pass uncounted until it does).
 */
export async function serveRateLimit(options: ServeOptions, log: FleetLogSink): Promise<ServeRateLimit> {
  if (options.rateLimit !== true) return { options: undefined, close: async () => {} };
  const limits = {
    prompt: options.rateLimitPrompt,
    mutation: options.rateLimitMutation,
    read: options.rateLimitRead,
  };
  const windowMs = options.rateLimitWindowMs;
  if (options.fleetRedis === undefined) return { options: { limits, windowMs }, close: async () => {} };
  const { RateLimitRedis } = await import('@sluice/fleet/redis');
  const redis = new RateLimitRedis({
    url: options.fleetRedis,
    ...(options.fleetName === undefined ? {} : { fleetName: options.fleetName }),
  });
  if (!(await redis.connected()))
    log.warn(
      { fleetName: options.fleetName ?? 'sluice' },
      'rate limits: Redis unreachable at start-up; requests pass uncounted until it answers',
    );
  return {
    options: { limits, windowMs, redis: { client: redis.client, nameSpace: redis.nameSpace } },
    close: () => redis.close(),
  };
}
