import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DEFAULT_RATE_LIMIT_CLIENTS } from '../defaults.js';
import { integerInRange, positiveInteger } from '../validate.js';
import { RATE_TIERS, type RateTier } from './openapi/route-doc.js';
import { RateLimitedError } from './rate-limited-error.js';
import { clockedWindows } from './rate-limit-store.js';

/** What `--rate-limit` limits, per client and tier (docs/security.md). */
export interface RateLimitOptions {
  /** Requests of each tier one client may make in one window. */
  limits: Readonly<Record<RateTier, number>>;
  /** The window, ms (at least 1 000). */
  windowMs: number;
  /**
   * Counters shared by a fleet (`--fleet-redis`): an ioredis client (the CLI's, from
   * `@sluice/fleet/redis`) and the prefix of its keys. Absent: counted in this process.
   */
  redis?: { client: object; nameSpace: string };
  /** Clients whose windows this process keeps per tier (without `redis`); default 10 000. */
  clients?: number;
}

/** What the limiter runs on and tells. */
export interface RateLimitParts {
  /** Wall-clock ms of the in-process windows. */
  now: () => number;
  /** Where the counters' failures (Redis unreachable) are logged: the server's failure log. */
  log?: { error(fields: Record<string, unknown>, message: string): void };
  /** Told of each refusal (the daemon's counters: `sluice_http_rate_limited_total`). */
  refused?: (tier: RateTier) => void;
}

type Limiter = (request: FastifyRequest) => Promise<{ isAllowed: boolean } & Partial<Outcome>>;
interface Outcome {
  isExceeded: boolean;
  max: number;
  ttl: number;
}

/** The options, checked: each limit 1 – 1 000 000, the window 1 s – a day. */
function checked(options: RateLimitOptions): RateLimitOptions {
  for (const tier of RATE_TIERS)
    integerInRange(`rate limit of the ${tier} tier`, options.limits[tier], 1, 1_000_000);
  integerInRange('rate limit window (ms)', options.windowMs, 1_000, 86_400_000);
  if (options.clients !== undefined) positiveInteger('rate limit clients', options.clients);
  return options;
}

/**
 * Counts each client's requests per tier with `@fastify/rate-limit` (loaded only here) and
 * refuses a request over its tier's limit with `429 rate_limit_exceeded` and `Retry-After`
 * (docs/decisions/035). A route's tier is its `rateTier` config (`defineRoute` sets it from the
 * route's description); a route without one is exempt. A client is its network address
 * (`request.ip`: the peer's, as no proxy is trusted; an IPv6 address by its /64), never a
 * header it chooses. Registered after the security gate, so only requests that passed it count.
 * When the counters fail (Redis unreachable) requests pass, and the first failure is logged.
 */
export function registerRateLimit(
  app: FastifyInstance,
  options: RateLimitOptions,
  { now, log, refused }: RateLimitParts,
): void {
  const { limits, windowMs, redis, clients = DEFAULT_RATE_LIMIT_CLIENTS } = checked(options);
  const plugin = import('@fastify/rate-limit');
  void app.register(plugin, {
    global: false,
    ...(redis === undefined
      ? { store: clockedWindows(now, clients) }
      : { redis: redis.client, nameSpace: redis.nameSpace }),
  });
  let limiters: Record<RateTier, Limiter> | undefined;
  app.addHook('onReady', async () => {
    const { normalizeIP } = (await plugin).default;
    const limiter = (tier: RateTier): Limiter =>
      app.createRateLimit({
        max: limits[tier],
        timeWindow: windowMs,
        keyGenerator: (request) => `${tier}:${normalizeIP(request.ip)}`,
      });
    limiters = { prompt: limiter('prompt'), mutation: limiter('mutation'), read: limiter('read') };
  });
  let failing = false;
  app.addHook('onRequest', async (request) => {
    const tier = request.routeOptions.config.rateTier;
    if (tier === undefined || limiters === undefined) return;
    let outcome: Awaited<ReturnType<Limiter>>;
    try {
      outcome = await limiters[tier](request);
      failing = false;
    } catch (error) {
      if (!failing)
        log?.error({ err: error, tier }, 'rate limit counters failed; requests pass until they answer');
      failing = true;
      return;
    }
    if (outcome.isAllowed || outcome.isExceeded !== true) return;
    refused?.(tier);
    throw new RateLimitedError({
      tier,
      limit: outcome.max ?? limits[tier],
      windowMs,
      retryAfterMs: Math.max(1, outcome.ttl ?? windowMs),
    });
  });
}
