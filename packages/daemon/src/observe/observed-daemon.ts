import type { ModelSchedulerSnapshot } from '@sluice/protocol';
import type { AgentPoolReport } from '../agents/index.js';
import type { SessionBridge } from '../sessions/index.js';
import type { DaemonTap } from './daemon-tap.js';

/**
 * What `/metrics` and `/dashboard` read of a daemon: its counters and the snapshots its API
 * serves (`/runtime/snapshot`, the sessions' summaries, the event memory), so that neither
 * keeps a second account of anything.
 */
export interface ObservedDaemon {
  readonly tap: DaemonTap;
  readonly runtime: { schedulerSnapshot(): ModelSchedulerSnapshot };
  /** Each model of the catalogue's scheduler (the `model` label of `/metrics`), when one is given. */
  readonly models?: { snapshots(): Array<{ model: string; snapshot: ModelSchedulerSnapshot }> };
  readonly bridge: Pick<SessionBridge, 'listSessions' | 'streams' | 'limits'>;
  /** The external agents' pool, when agents are configured. */
  readonly agentPool: { readonly processCount: number; describe(): AgentPoolReport } | undefined;
}

/** One live session as operators see it: ids and counts, never prompt text. */
export interface SessionLoad {
  sessionId: string;
  pendingPrompts: number;
  running: boolean;
  clients: number;
}

/**
 * The open sessions with their pending prompts, most pending first (then running ones), at most
 * `limit` of them, from the same summaries `GET /session/:id` serves; and totals over all.
 */
export function sessionLoads(
  bridge: ObservedDaemon['bridge'],
  limit: number,
): { count: number; pendingPrompts: number; top: SessionLoad[] } {
  const all = bridge.listSessions();
  let pendingPrompts = 0;
  const loads = all.map((summary) => {
    pendingPrompts += summary.pendingPromptCount;
    return {
      sessionId: summary.sessionId,
      pendingPrompts: summary.pendingPromptCount,
      running: summary.hasActivePrompt,
      clients: summary.clientCount,
    };
  });
  loads.sort((a, b) => b.pendingPrompts - a.pendingPrompts || Number(b.running) - Number(a.running));
  return { count: all.length, pendingPrompts, top: loads.slice(0, limit) };
}
