import { Redis } from 'ioredis';
import { fleetPrefix } from './fleet-keys.js';

/** Options of a {@link RateLimitRedis}. */
export interface RateLimitRedisOptions {
  /** `redis://host:port` (`--fleet-redis`). */
  url: string;
  /** The fleet's name (`--fleet-name`); default `sluice`. */
  fleetName?: string;
  /** A command that has not answered in this long fails (and the request passes); default 2 000. */
  commandTimeoutMs?: number;
}

/**
 * The Redis connection on which the daemons of a fleet share their HTTP rate-limit counters
 * (`--rate-limit` with `--fleet-redis`; docs/decisions/035). `@fastify/rate-limit` counts on
 * `client` under the keys `nameSpace…`, one Lua script per request. While Redis is unreachable
 * its commands fail at once rather than queue (the daemon then lets requests pass); ioredis
 * reconnects on its own.
 */
export class RateLimitRedis {
  readonly client: Redis;
  /** The prefix of the counters' keys: `sluice:{<fleet>}:rate-limit:`. */
  readonly nameSpace: string;
  private readonly commandTimeoutMs: number;

  constructor(options: RateLimitRedisOptions) {
    this.commandTimeoutMs = options.commandTimeoutMs ?? 2_000;
    this.client = new Redis(options.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: this.commandTimeoutMs,
      retryStrategy: (times: number): number => Math.min(50 * times, 1_000),
      connectionName: 'sluice-rate-limit',
    });
    // Failures surface through the commands that fail; without a listener ioredis prints each.
    this.client.on('error', () => {});
    this.nameSpace = `${fleetPrefix(options.fleetName ?? 'sluice')}rate-limit:`;
  }

  /**
   * Whether the connection is ready, waiting for it up to the command timeout: the server
   * listens once the counters can count (else its first requests would pass uncounted).
   */
  connected(): Promise<boolean> {
    if (this.client.status === 'ready') return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ready: boolean): void => {
        clearTimeout(timer);
        this.client.off('ready', onReady);
        resolve(ready);
      };
      const onReady = (): void => done(true);
      const timer = setTimeout(() => done(false), this.commandTimeoutMs);
      this.client.once('ready', onReady);
    });
  }

  /** Closes the connection. */
  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
