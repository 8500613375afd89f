import type { PoolLimits } from './fleet-scripts.js';

type State = 'q' | 's' | 'c';

/**
 * The fleet pool's semantics written plainly — SCH held across nodes, with leases that die
 * with their node — to check the Lua scripts against, transition by transition.
 */
export class PoolModel {
  readonly leases = new Map<string, { state: State; node: string }>();
  queue: string[] = [];
  used = 0;
  private readonly nodes = new Map<string, number>();

  constructor(
    private readonly limits: PoolLimits,
    private readonly ttlMs: number,
  ) {}

  admit(now: number, node: string, id: string): [string, number, number] {
    if (this.reclaim(now) > 0) this.grantNext();
    const existing = this.leases.get(id);
    if (existing) return [existing.state === 'q' ? 'queued' : 'granted', 0, 0];
    const { maxConcurrency, maxQueued, maxInflight } = this.limits;
    if (this.leases.size >= maxInflight) return ['InflightFull', this.leases.size, 0];
    const queued = this.queue.length;
    const used = this.used;
    let state: State;
    if (queued === 0 && used < maxConcurrency) {
      this.used++;
      state = 's';
    } else if (queued >= maxQueued) return ['QueueFull', queued + used, 0];
    else {
      this.queue.push(id);
      state = 'q';
    }
    this.leases.set(id, { state, node });
    this.nodes.set(node, Math.max(this.nodes.get(node) ?? -Infinity, now + this.ttlMs));
    return [state === 's' ? 'granted' : 'queued', queued + used, 0];
  }

  /** A transition's reply lists the grants it caused; those of the reclaim before it go unlisted. */
  leave(now: number, id: string): string[] {
    if (this.reclaim(now) > 0) this.grantNext();
    const lease = this.leases.get(id);
    if (lease?.state === 'q') this.queue = this.queue.filter((queued) => queued !== id);
    else if (lease?.state === 's') this.used--;
    if (lease) lease.state = 'c';
    return this.grantNext();
  }

  release(now: number, id: string): string[] {
    if (this.reclaim(now) > 0) this.grantNext();
    const lease = this.leases.get(id);
    if (lease?.state === 'q') this.queue = this.queue.filter((queued) => queued !== id);
    else if (lease?.state === 's') this.used--;
    this.leases.delete(id);
    return this.grantNext();
  }

  renew(now: number, node: string, queued: string[]): { known: boolean; states: string } {
    if (this.reclaim(now) > 0) this.grantNext();
    const known = this.nodes.has(node);
    this.nodes.set(node, Math.max(this.nodes.get(node) ?? -Infinity, now + this.ttlMs));
    return { known, states: queued.map((id) => this.leases.get(id)?.state ?? 'x').join('') };
  }

  private reclaim(now: number): number {
    let freed = 0;
    for (const [node, expiry] of this.nodes) {
      if (expiry > now) continue;
      for (const [id, lease] of this.leases) {
        if (lease.node !== node) continue;
        if (lease.state === 'q') this.queue = this.queue.filter((queued) => queued !== id);
        else if (lease.state === 's') this.used--;
        this.leases.delete(id);
        freed++;
      }
      this.nodes.delete(node);
    }
    return freed;
  }

  private grantNext(): string[] {
    const granted: string[] = [];
    while (this.used < this.limits.maxConcurrency && this.queue.length > 0) {
      const [id] = this.queue as [string];
      this.queue = this.queue.slice(1); // a model of a few entries: clarity over O(1)
      this.leases.get(id)!.state = 's';
      this.used++;
      granted.push(id);
    }
    return granted;
  }
}
