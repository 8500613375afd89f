/**
 * The REST + SSE wire contract of docs/protocol.md §1–§7: request bodies, response bodies, the
 * event envelope and the names both the daemon and the SDK use. Types only (plus a few
 * constant names), so it adds nothing to a browser bundle.
 */

/** Header carrying the client identity (PROTOCOL §1). */
export const CLIENT_ID_HEADER = 'X-Qwen-Client-Id';
/** Response header naming the event bus's epoch; sent back with `Last-Event-ID` (§6). */
export const EVENT_EPOCH_HEADER = 'X-Qwen-Event-Epoch';
/** Response header identifying one SSE connection (§6). */
export const SSE_STREAM_ID_HEADER = 'X-Qwen-SSE-Stream-Id';

/** The error envelope of every non-2xx response (§1): a message, a stable code, details. */
export interface WireErrorBody {
  error: string;
  code?: string;
  [detail: string]: unknown;
}

/** `503 prompt_queue_full` body (SPEC BP-8). */
export interface PromptQueueFullBody extends WireErrorBody {
  code: 'prompt_queue_full';
  sessionId: string;
  limit: number;
  pendingCount: number;
}

/** `limits` of `GET /capabilities`; `null` means the limit is disabled (BP-9). */
export interface CapabilityLimits {
  maxPendingPromptsPerSession: number | null;
  maxSessionsPerWorkspace?: number | null;
  maxSessions?: number | null;
  promptDeadlineMs?: number | null;
  /** Our addition: the model scheduler's limits. */
  model?: Record<string, number>;
  [limit: string]: unknown;
}

/** `GET /capabilities` (§3). */
export interface Capabilities {
  v: 1;
  protocolVersions?: { current: string; supported: string[] };
  mode: string;
  features: string[];
  workspaceCwd?: string;
  transports?: string[];
  policy?: { permission: string };
  limits?: CapabilityLimits;
  /** Our addition: the provider and default model serving the sessions. */
  runtime?: { provider: string; model?: string };
  /** Our addition: the daemon's version (`sluice --version`). */
  version?: string;
  [key: string]: unknown;
}

/** `POST /session` body (§4). */
export interface CreateSessionBody {
  cwd?: string;
  sessionScope?: 'single' | 'thread';
  sessionId?: string;
  modelServiceId?: string;
  approvalMode?: string;
}

/** `POST /session` → 200 (§4). */
export interface SessionHandle {
  sessionId: string;
  workspaceCwd: string;
  attached: boolean;
  clientId?: string;
  /** Epoch milliseconds on Sluice; the reference daemon sends an ISO string. */
  createdAt?: number | string;
  eventEpoch?: string;
  [key: string]: unknown;
}

/** `POST /session/:id/load` and `/resume` → 200: the create shape plus the replay cursor (§4). */
export interface RestoredSessionHandle extends SessionHandle {
  lastEventId?: number;
  eventEpoch?: string;
}

/** `POST /session/:id/branch` → 201 (§7). */
export interface BranchedSessionHandle extends RestoredSessionHandle {
  displayName?: string;
  forkedFrom?: { sessionId: string };
}

/** `GET /session/:id/status` and the entries of a workspace listing (§4). */
export interface SessionSummary {
  sessionId: string;
  workspaceCwd: string;
  createdAt?: number | string;
  updatedAt?: number | string;
  displayName?: string;
  clientCount?: number;
  hasActivePrompt?: boolean;
  pendingPromptCount?: number;
  isWaitingForPermission?: boolean;
  pendingInteractionCount?: number;
  pendingInteractions?: unknown[];
  [key: string]: unknown;
}

/** `GET /workspace/:cwd/sessions` → 200 (§4). */
export interface SessionListPage {
  sessions: SessionSummary[];
  nextCursor?: string;
}

/** `POST /session/:id/heartbeat` → 200 (§4). */
export interface HeartbeatResponse {
  sessionId: string;
  clientId?: string;
  lastSeenAt: number;
}

/** An ACP content block; Sluice reads `text` blocks, other kinds pass through. */
export type PromptContentBlock = { type: 'text'; text: string } | { type: string; [key: string]: unknown };

/** `POST /session/:id/prompt` body (§5). */
export interface PromptBody {
  prompt: PromptContentBlock[];
  /** Per-prompt deadline in ms; the effective one is `min(server flag, this)`. */
  deadlineMs?: number;
  [key: string]: unknown;
}

/** `POST /session/:id/prompt` → 202 (§5): where to wait for the terminal event. */
export interface PromptAccepted {
  promptId: string;
  /** The newest event id before admission: replay from it sees every event of the prompt. */
  lastEventId: number;
  eventEpoch?: string;
}

/** How a prompt ended well: `turn_complete` data, or a blocking daemon's `200` body. */
export interface PromptResult {
  stopReason: string;
  [key: string]: unknown;
}

/** One entry of `GET /session/:id/pending-prompts` (§5). */
export interface PendingPrompt {
  promptId: string;
  text: string;
  queuedAt: number | string;
  state: 'running' | 'queued';
  originatorClientId?: string;
}

/** `GET /session/:id/pending-prompts` → 200 (§5). */
export interface PendingPromptsResponse {
  pendingPrompts: PendingPrompt[];
}

/** `DELETE /session/:id/pending-prompts/:promptId` → 200 (§5). */
export interface RemovePendingPromptResponse {
  removed: boolean;
}

/** A permission vote (§7). */
export interface PermissionVote {
  outcome: { outcome: 'selected'; optionId: string } | { outcome: 'cancelled' };
  [key: string]: unknown;
}

/** Code of the `404` a vote on an unknown or already resolved permission request gets (§7). */
export const PERMISSION_NOT_FOUND_CODE = 'permission_request_not_found';

/** Wire names of the session events (§5, §6). Unknown types pass through clients untouched. */
export const EVENT_TYPES = {
  sessionUpdate: 'session_update',
  turnComplete: 'turn_complete',
  turnError: 'turn_error',
  pendingPromptAdded: 'pending_prompt_added',
  pendingPromptStarted: 'pending_prompt_started',
  pendingPromptCompleted: 'pending_prompt_completed',
  promptCancelled: 'prompt_cancelled',
  permissionRequest: 'permission_request',
  permissionResolved: 'permission_resolved',
  permissionAlreadyResolved: 'permission_already_resolved',
  sessionClosed: 'session_closed',
  sessionDied: 'session_died',
  sessionBranched: 'session_branched',
  sessionRecordingDegraded: 'session_recording_degraded',
  replayComplete: 'replay_complete',
  stateResyncRequired: 'state_resync_required',
  slowClientWarning: 'slow_client_warning',
  clientEvicted: 'client_evicted',
  streamError: 'stream_error',
} as const;

/** The JSON envelope on an SSE `data:` line (§6); `id` is absent on synthetic frames. */
export interface EventEnvelope<Data = unknown> {
  id?: number;
  v: 1;
  type: string;
  data: Data;
  promptId?: string;
  originatorClientId?: string;
  _meta?: { serverTimestamp?: number; [key: string]: unknown };
}

/** `turn_complete` data (§5). */
export interface TurnCompleteData {
  sessionId: string;
  promptId: string;
  stopReason: string;
  [key: string]: unknown;
}

/** `turn_error` data (§5); `code` is e.g. `prompt_deadline_exceeded` or `session_closed`. */
export interface TurnErrorData {
  sessionId: string;
  promptId: string;
  message: string;
  code?: string;
  errorKind?: string;
  /** Sending the prompt again may succeed (e.g. `model_overloaded`, `daemon_restarted`). */
  retryable?: boolean;
  /** How long to wait before sending it again, when the failure says (ms). */
  retryAfterMs?: number;
  [key: string]: unknown;
}

/** `state_resync_required` data (§6): ids in `(lastDeliveredId, earliestAvailableId)` are lost. */
export interface StateResyncRequiredData {
  reason: 'epoch_reset' | 'ring_evicted';
  detail?: string;
  lastDeliveredId: number;
  earliestAvailableId: number;
}

/** `replay_complete` data (§6). */
export interface ReplayCompleteData {
  lastReplayedEventId?: number;
  replayedCount: number;
}

/** `client_evicted` data (§6): resume with `Last-Event-ID: droppedAfter`. */
export interface ClientEvictedData {
  reason: string;
  droppedAfter: number;
  queueSize?: number;
  maxQueued?: number;
}
