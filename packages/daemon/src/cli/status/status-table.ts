import type { AgentPoolReport } from '../../agents/index.js';
import type { StatusReport } from './status-report.js';

/** A scheduler's counts against its limits, on one line. */
function schedulerCounts(scheduler: StatusReport['scheduler']): string {
  const limits = scheduler.limits;
  return (
    `${scheduler.accepting ? 'accepting' : 'not accepting'}  executing ${scheduler.executing}/${limits.maxConcurrency}` +
    `  queued ${scheduler.queued}/${limits.maxQueued}  inflight ${scheduler.inflight}/${limits.maxInflight}` +
    `  preparing ${scheduler.preparing}  cleaning ${scheduler.cleaning}`
  );
}

/**
 * The report as a compact text screen: a header, the scheduler's counts against its limits, and
 * tables of the sessions and pending prompts. `nowMs` dates the ages shown ("12s").
 */
export function statusText(report: StatusReport, nowMs: number): string {
  const scheduler = report.scheduler;
  const lines = [
    `sluice ${report.url}  ${report.health}${report.draining ? '  DRAINING' : ''}  ${report.at}`,
    `model      ${report.provider ?? '?'}/${report.model ?? '?'}  workspace ${report.workspaceCwd ?? '?'}`,
    `scheduler  ${schedulerCounts(scheduler)}`,
    // The daemon-wide cap over all models' slots, when one is set.
    ...(scheduler.totalSlots === undefined
      ? []
      : [
          `  all models  slots ${scheduler.totalSlots.used}/${scheduler.totalSlots.limit} (--model-max-concurrency-total)`,
        ]),
    // With a catalogue of models, each model's own slots, queue and in-flight calls.
    ...(scheduler.models ?? []).map(
      (model) => `  ${model.model} (${model.provider})  ${schedulerCounts(model)}`,
    ),
    `sessions   ${report.sessionCount} open (max ${report.limits.maxSessions ?? 'unlimited'})` +
      `  pending prompts ${report.pendingPromptTotal} (max ${report.limits.maxPendingPromptsPerSession ?? 'unlimited'} per session)`,
  ];
  if (report.sessions.length > 0) {
    lines.push('');
    lines.push(
      ...table(
        ['SESSION', 'CLIENTS', 'PENDING', 'ACTIVE', 'PERMISSION', 'UPDATED', 'CWD'],
        report.sessions.map((session) => [
          session.sessionId,
          String(session.clientCount),
          String(session.pendingPromptCount),
          session.hasActivePrompt ? 'yes' : 'no',
          session.isWaitingForPermission ? 'waiting' : '-',
          `${age(session.updatedAt, nowMs)} ago`,
          session.cwd ?? session.workspaceCwd,
        ]),
      ),
    );
    if (report.truncated)
      lines.push(`… and ${report.sessionCount - report.sessions.length} more (--sessions)`);
  }
  if (report.pendingPrompts.length > 0) {
    lines.push('');
    lines.push(
      ...table(
        ['PROMPT', 'SESSION', 'STATE', 'WAITING', 'BYTES'],
        report.pendingPrompts.map((prompt) => [
          prompt.promptId,
          prompt.sessionId,
          prompt.state,
          age(prompt.queuedAt, nowMs),
          String(prompt.textBytes),
        ]),
      ),
    );
  }
  lines.push(...agentLines(scheduler.agents));
  if (scheduler.jobs.length > 0) {
    lines.push('');
    lines.push(
      ...table(
        ['MODEL CALL', 'PHASE', 'SESSION', 'PROMPT', 'KIND', 'DEADLINE IN'],
        scheduler.jobs.map((job) => [
          job.callId,
          job.phase,
          job.sessionId ?? '-',
          job.turnId ?? '-',
          job.kind,
          duration(job.remainingMs),
        ]),
      ),
    );
  }
  return lines.join('\n') + '\n';
}

/** The agent processes: memory against the budget, and sessions, spares, turns and RSS of each. */
function agentLines(agents: AgentPoolReport | undefined): string[] {
  if (agents === undefined || agents.processes.length === 0) return [];
  return [
    '',
    `agents     memory ${mib(agents.rssBytes)} / ${mib(agents.memoryBudgetBytes)} MiB`,
    ...table(
      ['AGENT PID', 'AGENT', 'SESSIONS', 'SPARES', 'TURNS', 'RSS MIB'],
      agents.processes.map((p) => [
        String(p.pid ?? '-'),
        p.agent,
        `${p.sessions}/${agents.sessionsPerProcess}`,
        String(p.spares),
        String(p.runningTurns),
        mib(p.rssBytes),
      ]),
    ),
  ];
}

function mib(bytes: number): string {
  return String(Math.round(bytes / 1_048_576));
}

/** Rows padded to their columns' widths; the last column is not padded. */
function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)),
  );
  const line = (cells: string[]): string =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join('  ');
  return [line(header), ...rows.map(line)];
}

function age(iso: string, nowMs: number): string {
  const at = Date.parse(iso);
  return Number.isFinite(at) ? duration(Math.max(0, nowMs - at)) : '?';
}

/** `850ms`, `12s`, `5m03s`, `2h10m`. */
export function duration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  const seconds = Math.floor(ms / 1_000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}
