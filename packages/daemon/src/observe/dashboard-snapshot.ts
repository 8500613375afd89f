import type { ModelLimits, TotalSlotsReport } from '@sluice/protocol';
import { modelLoads, type ModelLoad } from './dashboard-models.js';
import type { RefusalEntry } from './recent-refusals.js';
import { sessionLoads, type ObservedDaemon, type SessionLoad } from './observed-daemon.js';

/** Sessions the dashboard lists: those with the most pending prompts. */
export const DASHBOARD_SESSION_ROWS = 50;

/** Running totals since start; the dashboard's series are their per-second differences. */
export interface DashboardTotals {
  promptsAdmitted: number;
  promptsRefused: number;
  turnsCompleted: number;
  turnsCancelled: number;
  turnsFailed: number;
  modelCallsRefused: number;
  journalRecords: number;
  sseSubscribers: number;
  sseEvictions: number;
  eventRingBytes: number;
  /** The daemon-wide budget of the event rings; null when unlimited. */
  eventRingBytesLimit: number | null;
  agentProcesses: number;
  /** Sessions open in agent processes, their trees' RSS and its budget (issue 27); 0 without agents. */
  agentSessions: number;
  agentRssBytes: number;
  agentMemoryBudgetBytes: number;
  inputTokens: number;
  outputTokens: number;
  /** Calls start-up reconciliation found interrupted; null until it ran. */
  interruptedCalls: number | null;
}

/** One second of the dashboard's chart: what happened in it. */
export interface SeriesPoint {
  /** Wall-clock ms at the end of the second. */
  at: number;
  completed: number;
  cancelled: number;
  failed: number;
  refused: number;
  journalRecords: number;
}

/** What the dashboard draws, once a second: counts, ids and limits, never prompt text. */
export interface DashboardSnapshot {
  at: number;
  scheduler: {
    accepting: boolean;
    queued: number;
    preparing: number;
    executing: number;
    cleaning: number;
    inflight: number;
    limits: Pick<ModelLimits, 'maxConcurrency' | 'maxQueued' | 'maxInflight'>;
  };
  /** Each catalogue model's scheduler (issue 29), in catalogue order. */
  models: ModelLoad[];
  /** The daemon-wide cap over all models' slots (`--model-max-concurrency-total`); null when none. */
  totalSlots: TotalSlotsReport | null;
  sessions: {
    count: number;
    pendingPrompts: number;
    /** The per-session limit of pending prompts; null when unlimited. */
    maxPendingPromptsPerSession: number | null;
    top: SessionLoad[];
  };
  refusals: RefusalEntry[];
  totals: DashboardTotals;
  series: SeriesPoint[];
}

/** The totals now, from the tap's counters and the daemon's own state. */
export function dashboardTotals(source: ObservedDaemon): DashboardTotals {
  const { prompts, model, journal } = source.tap;
  const streams = source.bridge.streams;
  const limit = streams.memory.maxBytes;
  const agents = source.agentPool?.describe();
  return {
    promptsAdmitted: prompts.admittedPrompts,
    promptsRefused: prompts.refusals.total(),
    turnsCompleted: prompts.turnCount('completed'),
    turnsCancelled: prompts.turnCount('cancelled'),
    turnsFailed: prompts.turnCount('failed'),
    modelCallsRefused: model.calls.total('refused'),
    journalRecords: journal.recordsCommitted,
    sseSubscribers: streams.totalSubscriberCount,
    sseEvictions: streams.evictedSubscribers,
    eventRingBytes: streams.memory.bytes,
    eventRingBytesLimit: Number.isFinite(limit) ? limit : null,
    agentProcesses: source.agentPool?.processCount ?? 0,
    agentSessions: agents?.processes.reduce((sum, p) => sum + p.sessions, 0) ?? 0,
    agentRssBytes: agents?.rssBytes ?? 0,
    agentMemoryBudgetBytes: agents?.memoryBudgetBytes ?? 0,
    inputTokens: model.inputTokens,
    outputTokens: model.outputTokens,
    interruptedCalls: journal.interruptedCalls ?? null,
  };
}

/** The point of one interval: the differences of the totals over it. */
export function seriesPoint(at: number, before: DashboardTotals, after: DashboardTotals): SeriesPoint {
  return {
    at,
    completed: after.turnsCompleted - before.turnsCompleted,
    cancelled: after.turnsCancelled - before.turnsCancelled,
    failed: after.turnsFailed - before.turnsFailed,
    refused: after.promptsRefused - before.promptsRefused,
    journalRecords: after.journalRecords - before.journalRecords,
  };
}

/** The snapshot now, with `totals` read by the caller and the chart's `series` so far. */
export function dashboardSnapshot(
  source: ObservedDaemon,
  at: number,
  totals: DashboardTotals,
  series: SeriesPoint[],
): DashboardSnapshot {
  const scheduler = source.runtime.schedulerSnapshot();
  const { maxConcurrency, maxQueued, maxInflight } = scheduler.limits;
  return {
    at,
    scheduler: {
      accepting: scheduler.accepting,
      queued: scheduler.queued,
      preparing: scheduler.preparing,
      executing: scheduler.executing,
      cleaning: scheduler.cleaning,
      inflight: scheduler.inflight,
      limits: { maxConcurrency, maxQueued, maxInflight },
    },
    ...modelLoads(source),
    sessions: {
      ...sessionLoads(source.bridge, DASHBOARD_SESSION_ROWS),
      maxPendingPromptsPerSession: source.bridge.limits.maxPendingPromptsPerSession,
    },
    refusals: source.tap.refusals.list(),
    totals,
    series,
  };
}
