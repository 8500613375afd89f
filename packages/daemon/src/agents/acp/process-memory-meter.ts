import type { Clock } from '@sluice/runtime';
import type { AgentProcess } from './agent-process.js';
import { processTreeRss } from './process-memory.js';

/** What a new agent process is expected to take before one has been measured (qwen: ~400 MiB). */
export const INITIAL_PROCESS_ESTIMATE_BYTES = 256 * 1_048_576;
/** Measurements younger than this are reused (one pass over `/proc` serves a burst of decisions). */
const MEASURE_TTL_MS = 1_000;

/**
 * The resident memory of the agent processes' trees, measured from `/proc` at most once a
 * second, and the size a new process is expected to take: the largest tree seen so far.
 */
export class ProcessMemory {
  private readonly rss = new Map<AgentProcess, number>();
  private measuredAt = Number.NEGATIVE_INFINITY;
  private largest = INITIAL_PROCESS_ESTIMATE_BYTES;
  private measuredOnce = false;

  constructor(private readonly clock: Clock) {}

  /** The expected tree size of one more process, in bytes. */
  estimate(): number {
    return this.largest;
  }

  /** The last measured tree size of `proc`, in bytes (0 before the first measurement). */
  rssOf(proc: AgentProcess): number {
    return this.rss.get(proc) ?? 0;
  }

  /** Sum over `procs` of their trees' RSS; one still starting counts at least the estimate. */
  total(procs: Iterable<AgentProcess>): number {
    const list = [...procs];
    this.refresh(list);
    let bytes = 0;
    for (const proc of list) {
      const measured = this.rssOf(proc);
      bytes +=
        proc.info === undefined && proc.dead === undefined ? Math.max(measured, this.largest) : measured;
    }
    return bytes;
  }

  /** Measures the trees of `procs` unless the last measurement is recent. */
  refresh(procs: readonly AgentProcess[]): void {
    const now = this.clock.now();
    if (now - this.measuredAt < MEASURE_TTL_MS) return;
    this.measuredAt = now;
    const pids = new Map<number, AgentProcess>();
    for (const proc of procs) if (proc.child.pid !== undefined) pids.set(proc.child.pid, proc);
    for (const [pid, bytes] of processTreeRss([...pids.keys()])) {
      const proc = pids.get(pid)!;
      this.rss.set(proc, bytes);
      // Only a started process shows what one costs (a starting one is still growing).
      if (proc.info !== undefined && bytes > 0 && (bytes > this.largest || !this.measuredOnce)) {
        this.largest = this.measuredOnce ? Math.max(this.largest, bytes) : bytes;
        this.measuredOnce = true;
      }
    }
  }

  forget(proc: AgentProcess): void {
    this.rss.delete(proc);
  }
}
