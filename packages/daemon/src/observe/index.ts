export { DaemonTap, type DaemonTapOptions } from './daemon-tap.js';
export { DashboardFeed, DashboardViewerLimitError, type DashboardFeedOptions } from './dashboard-feed.js';
export type { DashboardSnapshot, DashboardTotals, SeriesPoint } from './dashboard-snapshot.js';
export { Distribution } from './distribution.js';
export { LabeledCounts, OTHER_LABEL } from './labeled-counts.js';
export type { ObservedDaemon, SessionLoad } from './observed-daemon.js';
export type { MetricDeclaration, MetricsRegistry } from './prometheus-registry.js';
export { REGENERATE_METRICS_REFERENCE, renderMetricsReference } from './metrics-reference.js';
export { RecentRefusals, type RefusalEntry } from './recent-refusals.js';
