/**
 * A histogram kept as plain numbers: cheap to observe on a hot path (no prom-client loaded) and
 * read at scrape time as Prometheus buckets. Values are in the unit of the bounds (seconds for
 * durations, per Prometheus conventions).
 */
export class Distribution {
  /** Upper bounds of the buckets, ascending; `+Inf` is implied. */
  readonly bounds: readonly number[];
  /** Observations per bucket (not cumulative); the last slot is above every bound. */
  private readonly counts: number[];
  private total = 0;
  private observations = 0;

  constructor(bounds: readonly number[]) {
    if (bounds.length === 0) throw new RangeError('bounds must list at least one bucket bound, got []');
    bounds.forEach((bound, index) => {
      if (!Number.isFinite(bound) || (index > 0 && bound <= bounds[index - 1]!))
        throw new RangeError(`bounds must be finite and ascending, got [${bounds.join(', ')}]`);
    });
    this.bounds = Object.freeze([...bounds]);
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  /** Counts one value in the first bucket whose bound is at least `value`. */
  observe(value: number): void {
    const bounds = this.bounds;
    let index = 0;
    while (index < bounds.length && value > bounds[index]!) index++;
    this.counts[index]!++;
    this.total += value;
    this.observations++;
  }

  /** Observations so far. */
  get count(): number {
    return this.observations;
  }

  /** Sum of the observed values. */
  get sum(): number {
    return this.total;
  }

  /** Cumulative counts per bound, as Prometheus' `le` buckets (without `+Inf`, which is `count`). */
  cumulative(): number[] {
    const result: number[] = [];
    let running = 0;
    for (let index = 0; index < this.bounds.length; index++) result.push((running += this.counts[index]!));
    return result;
  }
}

/** Buckets of a model call phase, in seconds: 1 ms to 5 minutes. */
export const PHASE_SECONDS = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
] as const;

/** Buckets of a journal commit, in seconds: 0.5 ms to 2.5 s. */
export const COMMIT_SECONDS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
] as const;

/** Buckets of records per journal transaction: 1 to the writer's default batch cap, 2048. */
export const BATCH_RECORDS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048] as const;
