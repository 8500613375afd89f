import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { positiveInteger } from '../validate.js';

/** One client's window in one tier: requests counted since `startMs`. */
interface Window {
  count: number;
  startMs: number;
}

type Answer = (error: Error | null, result?: { current: number; ttl: number }) => void;

/**
 * The rate limiter's counters in this process (without `--fleet-redis`), for
 * `@fastify/rate-limit`: a fixed window per client that starts at its first request, as the
 * plugin's own memory store counts, but on the daemon's clock (`now`), so that tests move time
 * rather than wait. At most `clients` windows are kept per tier; past that the least recently
 * counted client is forgotten (it starts a new window), in O(1).
 */
class ClockedWindows implements FastifyRateLimitStore {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly now: () => number,
    private readonly clients: number,
  ) {}

  incr(key: string, answer: Answer, windowMs: number): void {
    const now = this.now();
    let window = this.windows.get(key);
    if (window === undefined || now - window.startMs >= windowMs) window = { count: 0, startMs: now };
    else this.windows.delete(key); // re-inserted below: the Map's order is the recency order
    window.count += 1;
    this.windows.set(key, window);
    if (this.windows.size > this.clients) this.windows.delete(this.windows.keys().next().value!);
    answer(null, { current: window.count, ttl: window.startMs + windowMs - now });
  }

  /** Each tier (the plugin's child of a limiter) counts in windows of its own. */
  child(): FastifyRateLimitStore {
    return new ClockedWindows(this.now, this.clients);
  }

  /** Windows held now (for the bound's test). */
  get size(): number {
    return this.windows.size;
  }
}

/** The plugin's `store` option: windows on `now`, at most `clients` of them per tier. */
export function clockedWindows(now: () => number, clients: number): FastifyRateLimitStoreCtor {
  positiveInteger('rate limit clients', clients);
  return class extends ClockedWindows {
    constructor() {
      super(now, clients);
    }
  };
}

export type { ClockedWindows };
