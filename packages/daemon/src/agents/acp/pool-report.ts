import type { ProcessPool } from './process-pool.js';

/** One agent process as the snapshot, `/metrics`, `sluice status` and the dashboard show it. */
export interface AgentProcessReport {
  pid: number | undefined;
  agent: string;
  workspace: string | undefined;
  /** Sessions open in it, and being opened. */
  sessions: number;
  opening: number;
  /** Agent sessions opened ahead, ready for creates to adopt (docs/decisions/030). */
  spares: number;
  runningTurns: number;
  /** Resident memory of its whole process tree, measured at most a second ago. */
  rssBytes: number;
  /** Started and answered `initialize`. */
  ready: boolean;
}

/** The agent processes and the memory budget they share. */
export interface AgentPoolReport {
  sessionsPerProcess: number;
  memoryBudgetBytes: number;
  rssBytes: number;
  processes: AgentProcessReport[];
}

/** What {@link ProcessPool} holds now. */
export function describePool(pool: ProcessPool): AgentPoolReport {
  const rssBytes = pool.memoryInUse();
  const processes = [...pool.processes].map((proc) => ({
    pid: proc.child.pid,
    agent: proc.name,
    workspace: pool.workspaceOf(proc),
    sessions: proc.sessions.size,
    opening: proc.opening,
    spares: pool.spares.readyIn(proc),
    runningTurns: proc.runningTurns,
    rssBytes: pool.memory.rssOf(proc),
    ready: proc.info !== undefined,
  }));
  return {
    sessionsPerProcess: pool.sessionsPerProcess,
    memoryBudgetBytes: pool.memoryBudgetBytes,
    rssBytes,
    processes,
  };
}
