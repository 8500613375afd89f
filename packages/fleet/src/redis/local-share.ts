import type { ModelLimits } from '@sluice/protocol';
import { OverloadedError, type CapacityEvents, type Job } from '@sluice/runtime';
import type { SharedLimits } from './redis-capacity-options.js';

/** One pool's share: slots held, the FIFO of waiting jobs, and every job in flight. */
class PoolShare {
  used = 0;
  /** Waiting jobs in admission order; a Map keeps insertion order and removes in O(1). */
  readonly queue = new Map<string, Job>();
  /** Every job in flight here, with whether it holds a slot. */
  readonly inflight = new Map<string, boolean>();
}

/**
 * This node's share of the fleet's limits while Redis is unreachable (`--fleet-on-outage
 * local`): each limit divided by the nodes last seen alive, so that N nodes falling back
 * together stay near the fleet's totals. The same semantics as the shared pool — FIFO slots,
 * a bounded queue, in-flight including cleanup — held in this process.
 */
export class LocalShare {
  private readonly pools = new Map<string, PoolShare>();
  private share: SharedLimits;

  constructor(
    private readonly fleetLimits: Readonly<Pick<ModelLimits, keyof SharedLimits>>,
    private readonly events: CapacityEvents<Job>,
    private readonly retryAfterMs: (ahead: number, maxConcurrency: number) => number,
  ) {
    this.share = shareOf(fleetLimits, 1);
  }

  /** The limits applied now. */
  get limits(): SharedLimits {
    return this.share;
  }

  /** Divides the fleet's limits by `nodes` (at least 1) for the admissions that follow. */
  setNodes(nodes: number): void {
    this.share = shareOf(this.fleetLimits, nodes);
  }

  /** A slot (`true`) or a queue place (`false`) for `job` in `pool`, or a typed refusal. */
  acquire(job: Job, pool: string): boolean {
    let share = this.pools.get(pool);
    if (share === undefined) {
      share = new PoolShare();
      this.pools.set(pool, share);
    }
    const { maxConcurrency, maxQueued, maxInflight } = this.share;
    if (share.inflight.size >= maxInflight)
      throw new OverloadedError(
        'InflightFull',
        maxInflight,
        this.retryAfterMs(share.inflight.size, maxConcurrency),
      );
    const queued = share.queue.size;
    const slotFree = queued === 0 && share.used < maxConcurrency;
    if (!slotFree && queued >= maxQueued)
      throw new OverloadedError(
        'QueueFull',
        maxQueued,
        this.retryAfterMs(queued + share.used, maxConcurrency),
      );
    share.inflight.set(job.callId, slotFree);
    if (slotFree) share.used++;
    else share.queue.set(job.callId, job);
    return slotFree;
  }

  /** `job` gives back its slot or queue place and stays in flight. */
  leave(job: Job, pool: string): void {
    const share = this.pools.get(pool);
    if (share === undefined) return;
    if (share.queue.delete(job.callId)) return;
    if (share.inflight.get(job.callId) !== true) return;
    share.inflight.set(job.callId, false);
    share.used--;
    this.grantNext(share);
  }

  /** `job` is done. */
  release(job: Job, pool: string): void {
    const share = this.pools.get(pool);
    if (share === undefined) return;
    this.leave(job, pool);
    share.queue.delete(job.callId);
    share.inflight.delete(job.callId);
    if (share.inflight.size === 0) this.pools.delete(pool);
  }

  private grantNext(share: PoolShare): void {
    while (share.used < this.share.maxConcurrency) {
      const next = share.queue.entries().next();
      if (next.done === true) return;
      const [id, job] = next.value;
      share.queue.delete(id);
      share.inflight.set(id, true);
      share.used++;
      this.events.granted(job);
    }
  }
}

/** Each limit over `nodes`, rounded down, keeping at least one slot and in-flight ≥ slots. */
function shareOf(limits: Readonly<Pick<ModelLimits, keyof SharedLimits>>, nodes: number): SharedLimits {
  const n = Math.max(1, nodes);
  const maxConcurrency = Math.max(1, Math.floor(limits.maxConcurrency / n));
  return {
    maxConcurrency,
    maxQueued: Math.floor(limits.maxQueued / n),
    maxInflight: Math.max(maxConcurrency, Math.floor(limits.maxInflight / n)),
  };
}
