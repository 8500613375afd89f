import type { AgentPoolReport } from '../../agents/index.js';
import type { ModelSchedulerSnapshot } from '@sluice/protocol';
import type { DaemonReader } from './daemon-reader.js';
import { DaemonUnreachableError } from './daemon-reader.js';

/** One live session as `sluice status` shows it. */
export interface SessionStatus {
  sessionId: string;
  workspaceCwd: string;
  cwd?: string;
  displayName?: string;
  createdAt: string;
  updatedAt: string;
  clientCount: number;
  pendingPromptCount: number;
  hasActivePrompt: boolean;
  isWaitingForPermission: boolean;
}

/** One admitted, unsettled prompt: its size instead of its text. */
export interface PendingPromptStatus {
  sessionId: string;
  promptId: string;
  state: 'running' | 'queued';
  /** Admission time, ISO 8601. */
  queuedAt: string;
  textBytes: number;
  originatorClientId?: string;
}

/** What `sluice status` reads from a running daemon at one instant; `--json` prints it as is. */
export interface StatusReport {
  url: string;
  /** When it was read, ISO 8601. */
  at: string;
  health: string;
  provider?: string;
  model?: string;
  workspaceCwd?: string;
  limits: { maxSessions: number | null; maxPendingPromptsPerSession: number | null };
  scheduler: ModelSchedulerSnapshot & {
    agents?: AgentPoolReport;
    /** Each model's scheduler, when the catalogue has more than one (docs/models.md). */
    models?: Array<ModelSchedulerSnapshot & { model: string; provider: string }>;
  };
  draining: boolean;
  sessionCount: number;
  pendingPromptTotal: number;
  /** The daemon has more live sessions than `sessions` lists. */
  truncated: boolean;
  sessions: SessionStatus[];
  pendingPrompts: PendingPromptStatus[];
}

interface Capabilities {
  workspaceCwd?: string;
  limits?: { maxSessions?: number | null; maxPendingPromptsPerSession?: number | null };
  runtime?: { provider?: string; model?: string };
}

interface Overview {
  draining: boolean;
  sessionCount: number;
  pendingPromptTotal: number;
  truncated: boolean;
  sessions: SessionStatus[];
}

interface PendingPromptWire {
  promptId: string;
  text: string;
  queuedAt: number;
  state: 'running' | 'queued';
  originatorClientId?: string;
}

/** Sessions whose pending prompts are read at once. */
const PENDING_READS_AT_ONCE = 8;

/**
 * Reads the daemon's state through its read-only routes: `/health`, `/capabilities`,
 * `/runtime/snapshot`, `/daemon/sessions` and, for each session with pending prompts,
 * `/session/:id/pending-prompts`. Prompt text is reduced to its size here, before anything
 * is printed.
 */
export async function readStatus(
  reader: DaemonReader,
  sessionLimit: number,
  nowMs: number,
): Promise<StatusReport> {
  const health = await reader.get<{ status?: string }>('/health');
  const [capabilities, scheduler, overview] = await Promise.all([
    reader.get<Capabilities>('/capabilities'),
    reader.get<StatusReport['scheduler']>('/runtime/snapshot'),
    reader.get<Overview>(`/daemon/sessions?size=${sessionLimit}`),
  ]);
  const report: StatusReport = {
    url: reader.baseUrl,
    at: new Date(nowMs).toISOString(),
    health: health.status ?? 'unknown',
    limits: {
      maxSessions: capabilities.limits?.maxSessions ?? null,
      maxPendingPromptsPerSession: capabilities.limits?.maxPendingPromptsPerSession ?? null,
    },
    scheduler,
    draining: overview.draining,
    sessionCount: overview.sessionCount,
    pendingPromptTotal: overview.pendingPromptTotal,
    truncated: overview.truncated,
    sessions: overview.sessions.map(sessionStatus),
    pendingPrompts: await pendingPrompts(reader, overview.sessions),
  };
  if (capabilities.runtime?.provider !== undefined) report.provider = capabilities.runtime.provider;
  if (capabilities.runtime?.model !== undefined) report.model = capabilities.runtime.model;
  if (capabilities.workspaceCwd !== undefined) report.workspaceCwd = capabilities.workspaceCwd;
  return report;
}

/** The fields shown, and no others: a summary's pending interactions may quote a tool call. */
function sessionStatus(summary: SessionStatus): SessionStatus {
  const status: SessionStatus = {
    sessionId: summary.sessionId,
    workspaceCwd: summary.workspaceCwd,
    createdAt: summary.createdAt,
    updatedAt: summary.updatedAt,
    clientCount: summary.clientCount,
    pendingPromptCount: summary.pendingPromptCount,
    hasActivePrompt: summary.hasActivePrompt,
    isWaitingForPermission: summary.isWaitingForPermission,
  };
  if (summary.cwd !== undefined) status.cwd = summary.cwd;
  if (summary.displayName !== undefined) status.displayName = summary.displayName;
  return status;
}

async function pendingPrompts(
  reader: DaemonReader,
  sessions: SessionStatus[],
): Promise<PendingPromptStatus[]> {
  const busy = sessions.filter((session) => session.pendingPromptCount > 0);
  const result: PendingPromptStatus[] = [];
  for (let i = 0; i < busy.length; i += PENDING_READS_AT_ONCE) {
    const batch = busy.slice(i, i + PENDING_READS_AT_ONCE);
    const lists = await Promise.all(batch.map((session) => pendingOf(reader, session.sessionId)));
    for (const list of lists) result.push(...list);
  }
  return result;
}

async function pendingOf(reader: DaemonReader, sessionId: string): Promise<PendingPromptStatus[]> {
  let listed: { pendingPrompts: PendingPromptWire[] };
  try {
    listed = await reader.get(`/session/${encodeURIComponent(sessionId)}/pending-prompts`);
  } catch (error) {
    // Closed since the overview was read: it has no pending prompts any more.
    if (error instanceof DaemonUnreachableError && error.status === 404) return [];
    throw error;
  }
  return listed.pendingPrompts.map((prompt) => {
    const status: PendingPromptStatus = {
      sessionId,
      promptId: prompt.promptId,
      state: prompt.state,
      queuedAt: new Date(prompt.queuedAt).toISOString(),
      textBytes: Buffer.byteLength(prompt.text),
    };
    if (prompt.originatorClientId !== undefined) status.originatorClientId = prompt.originatorClientId;
    return status;
  });
}
