import { CataloguedError } from '@sluice/protocol';
import { systemClock, type Clock, type TimerHandle } from '@sluice/runtime';
import {
  dashboardSnapshot,
  dashboardTotals,
  seriesPoint,
  type DashboardSnapshot,
  type DashboardTotals,
  type SeriesPoint,
} from './dashboard-snapshot.js';
import type { ObservedDaemon } from './observed-daemon.js';

/** Options of a {@link DashboardFeed}. */
export interface DashboardFeedOptions {
  /** Drives the snapshots; default the system clock. */
  clock?: Clock;
  /** Wall-clock ms stamped on snapshots; default `Date.now`. */
  wallNow?: () => number;
  /** Time between two snapshots; default 1000 ms. */
  intervalMs?: number;
  /** Points the chart keeps; default 120 (two minutes at one a second). */
  historyPoints?: number;
  /** Viewers at once; default 16. */
  maxViewers?: number;
}

/** Too many dashboards are open; the new one is refused (`429 dashboard_viewer_limit`). */
export class DashboardViewerLimitError extends CataloguedError<'dashboard_viewer_limit'> {
  readonly code = 'dashboard_viewer_limit';
  constructor(readonly limit: number) {
    super(`Too many dashboard viewers (limit ${limit}); close one and retry`);
  }
}

type Viewer = (snapshot: DashboardSnapshot) => void;

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer, got ${String(value)}`);
  return value;
}

/**
 * The dashboard's stream of snapshots: while anyone watches, one snapshot every `intervalMs`,
 * each with the chart's last `historyPoints` points; nothing runs while nobody does. Bounded in
 * viewers and in history (a ring).
 */
export class DashboardFeed {
  private readonly clock: Clock;
  private readonly wallNow: () => number;
  private readonly intervalMs: number;
  private readonly maxViewers: number;
  private readonly viewers = new Set<Viewer>();
  private readonly history: Array<SeriesPoint | undefined>;
  private historyNext = 0;
  private previous: DashboardTotals | undefined;
  private timer: TimerHandle | undefined;

  constructor(
    private readonly source: ObservedDaemon,
    options: DashboardFeedOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.wallNow = options.wallNow ?? Date.now;
    this.intervalMs = positive('intervalMs', options.intervalMs ?? 1000);
    this.maxViewers = positive('maxViewers', options.maxViewers ?? 16);
    const points = positive('historyPoints', options.historyPoints ?? 120);
    this.history = new Array<SeriesPoint | undefined>(points).fill(undefined);
  }

  /** Viewers now. */
  get viewerCount(): number {
    return this.viewers.size;
  }

  /**
   * Adds a viewer, which gets a snapshot now and one every interval until it unsubscribes
   * (the returned function). Throws {@link DashboardViewerLimitError} when the feed is full.
   */
  subscribe(viewer: Viewer): () => void {
    if (this.viewers.size >= this.maxViewers) throw new DashboardViewerLimitError(this.maxViewers);
    if (this.viewers.size === 0) this.start();
    this.viewers.add(viewer);
    viewer(this.snapshot(this.previous ?? dashboardTotals(this.source)));
    return () => {
      if (!this.viewers.delete(viewer) || this.viewers.size > 0) return;
      this.stop();
    };
  }

  /** A new watch starts a new chart: a gap without anyone watching has no points. */
  private start(): void {
    this.history.fill(undefined);
    this.historyNext = 0;
    this.previous = dashboardTotals(this.source);
    this.timer = this.clock.setTimer(this.tick, this.intervalMs);
  }

  private stop(): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.previous = undefined;
  }

  private readonly tick = (): void => {
    this.timer = this.clock.setTimer(this.tick, this.intervalMs);
    const totals = dashboardTotals(this.source);
    const point = seriesPoint(this.wallNow(), this.previous ?? totals, totals);
    this.previous = totals;
    this.history[this.historyNext] = point;
    this.historyNext = (this.historyNext + 1) % this.history.length;
    const snapshot = this.snapshot(totals);
    for (const viewer of this.viewers) viewer(snapshot);
  };

  private snapshot(totals: DashboardTotals): DashboardSnapshot {
    return dashboardSnapshot(this.source, this.wallNow(), totals, this.series());
  }

  /** The chart's points, oldest first. */
  private series(): SeriesPoint[] {
    const points: SeriesPoint[] = [];
    const size = this.history.length;
    for (let step = 0; step < size; step++) {
      const point = this.history[(this.historyNext + step) % size];
      if (point !== undefined) points.push(point);
    }
    return points;
  }
}
