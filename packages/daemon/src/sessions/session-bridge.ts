import { isAbsolute, resolve, sep } from 'node:path';
import { LinkedQueue, type Clock } from '@sluice/runtime';
import {
  promptText,
  type Agent,
  type AgentTurn,
  type ContentBlock,
  type ConversationMessage,
  type SessionUpdate,
} from './agent.js';
import { ClientRegistry, assertClientIdFormat } from './clients.js';
import { ConversationLog, isConversationMessage } from './conversation.js';
import {
  BranchWhilePromptActiveError,
  BridgeShuttingDownError,
  InvalidBranchNameError,
  InvalidClientIdError,
  InvalidCwdError,
  InvalidDeadlineError,
  InvalidPromptError,
  InvalidSessionIdError,
  InvalidSessionScopeError,
  InvalidTurnResultError,
  PromptAbortedError,
  PromptDeadlineExceededError,
  PromptQueueFullError,
  SessionClosedError,
  SessionClosingError,
  SessionIdConflictError,
  SessionLimitExceededError,
  SessionNotFoundError,
  SessionWorkspaceConflictError,
  WorkspaceMismatchError,
} from './errors.js';
import { resolveBridgeOptions, type SessionBridgeOptions, type TurnFailure } from './options.js';
import {
  createDeferred,
  type BranchTicket,
  type BranchedSession,
  type Deferred,
  type PromptOutcome,
  type PromptResult,
  type PromptTicket,
  type QueueItem,
} from './queue-items.js';
import { SESSION_EVENT, type SessionEvent, type SessionEventSink } from './session-events.js';
import {
  compareListPosition,
  decodeListCursor,
  encodeListCursor,
  listPageSize,
  type SessionListOptions,
  type StoredSessionSummary,
} from './session-listing.js';
import type { SessionRecord, SessionScope, SessionStore } from './session-store.js';

/** `POST /session` in bridge terms. */
export interface CreateSessionRequest {
  /** Absolute working directory; defaults to the first served workspace. */
  cwd?: string;
  /** Default `single`. */
  scope?: SessionScope;
  /**
   * A caller-chosen UUID: creates a thread session with that id (or attaches to it when live).
   * Use {@link SessionBridge.openSession} for it: `createSession` does not read the store, so a
   * stored session of that id would be replaced.
   */
  sessionId?: string;
  /** The caller's `X-Qwen-Client-Id`; a fresh id is minted when absent. */
  clientId?: string;
}

/** The create/attach/restore answer (PROTOCOL §4), less the event-bus fields. */
export interface SessionHandle {
  sessionId: string;
  workspaceCwd: string;
  attached: boolean;
  clientId: string;
  /** Wall-clock epoch milliseconds. */
  createdAt: number;
}

/** Per-request options of {@link SessionBridge.sendPrompt}. */
export interface SendPromptOptions {
  /** Aborted before admission → rejected; aborted later → the prompt is removed or cancelled. */
  signal?: AbortSignal;
  /** The sender; must be registered on the session. Stamped as `originatorClientId`. */
  clientId?: string;
  /** Per-request deadline in ms; the effective one is the minimum with `promptDeadlineMs`. */
  deadlineMs?: number;
}

/** A prompt the bridge admitted. */
export interface PromptAdmission {
  readonly promptId: string;
  /** True when it had to wait in the FIFO (it then gets the `pending_prompt_*` events). */
  readonly queued: boolean;
  /**
   * Settles when the terminal event is published: resolves for `turn_complete`, rejects with
   * the cause for `turn_error`. Its rejection is pre-handled, so ignoring it is safe.
   */
  readonly done: Promise<PromptResult>;
}

/** One entry of `GET /session/:id/pending-prompts`. */
export interface PendingPromptInfo {
  promptId: string;
  text: string;
  queuedAt: number;
  state: 'running' | 'queued';
  originatorClientId?: string;
}

/** `GET /session/:id/status` (PROTOCOL §4), plus a few fields of our own. */
export interface SessionSummary {
  sessionId: string;
  workspaceCwd: string;
  cwd: string;
  createdAt: number;
  updatedAt: number;
  displayName?: string;
  forkedFrom?: { sessionId: string };
  clientCount: number;
  hasActivePrompt: boolean;
  pendingPromptCount: number;
  isWaitingForPermission: boolean;
  pendingInteractionCount: number;
  pendingInteractions: unknown[];
}

/** One page of `GET /workspace/:cwd/sessions`; `nextCursor` is absent on the last page. */
export interface SessionSummaryPage {
  sessions: SessionSummary[];
  nextCursor?: string;
}

/** `POST /session/:id/heartbeat`. */
export interface HeartbeatResult {
  sessionId: string;
  clientId?: string;
  lastSeenAt: number;
}

/** The limits `/capabilities` advertises; `null` means unlimited (SPEC BP-9). */
export interface BridgeLimits {
  maxPendingPromptsPerSession: number | null;
  maxSessionsPerWorkspace: number | null;
  maxSessions: number | null;
  promptDeadlineMs: number | null;
}

/** Options of {@link SessionBridge.closeSession}. */
export interface CloseSessionOptions {
  /** Carried by `session_closed`; default `client_close`. */
  reason?: string;
  clientId?: string;
}

/** Options of {@link SessionBridge.branchSession}. */
export interface BranchSessionOptions {
  /** Display name of the new session; default `<source name> (Branch)`. */
  name?: string;
  /** Registered on the new session (minted when absent). */
  clientId?: string;
}

/** Options of {@link SessionBridge.restoreSession}. */
export interface RestoreSessionOptions {
  /** `load` also replays the stored conversation as `session_update` events; default `resume`. */
  mode?: 'load' | 'resume';
  clientId?: string;
  /**
   * The workspace the caller expects the session in (the body's `cwd`): absolute and inside a
   * served workspace (`InvalidCwdError`, `WorkspaceMismatchError`). A session live in another
   * workspace is a `SessionWorkspaceConflictError`; one stored in another is not found there.
   * Absent = wherever the session lives.
   */
  cwd?: unknown;
}

type EntryState = 'open' | 'closing' | 'closed';

interface SessionEntry {
  readonly sessionId: string;
  readonly workspaceCwd: string;
  readonly cwd: string;
  readonly scope: SessionScope;
  readonly createdAt: number;
  updatedAt: number;
  displayName: string | undefined;
  readonly forkedFrom: { sessionId: string } | undefined;
  state: EntryState;
  /** Prompts and branches waiting for the runner, in arrival order. */
  readonly queue: LinkedQueue<QueueItem>;
  /** True from the start of an item until it is fully done (agent returned, session saved). */
  busy: boolean;
  /** The item holding the runner, while it does. */
  active: QueueItem | undefined;
  /** Admitted prompts not yet settled: queued plus running (SPEC BP-1). */
  pendingPromptCount: number;
  /** The last refusal of a full queue, thrown again while the count is the same (see `queueFull`). */
  queueFull: PromptQueueFullError | undefined;
  readonly prompts: Map<string, PromptTicket>;
  readonly conversation: ConversationLog;
  readonly clients: ClientRegistry;
  /** Saves of this session, chained so they reach the store one at a time, in order. */
  saving: Promise<void>;
  readonly closed: Deferred<void>;
}

interface OpenEntryParams {
  sessionId: string;
  workspaceCwd: string;
  cwd: string;
  scope: SessionScope;
  createdAt: number;
  updatedAt: number;
  displayName?: string;
  forkedFrom?: { sessionId: string };
  conversation: readonly ConversationMessage[];
}

type AgentOutcome =
  { type: 'returned'; result: unknown } | { type: 'threw'; error: unknown } | { type: 'skipped' };

/** Stands in for the agent's result when the turn was aborted before the agent started. */
const SKIPPED: unique symbol = Symbol('skipped');
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CODE_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;
const MAX_ERROR_MESSAGE_CHARS = 2_000;
const MAX_STOP_REASON_CHARS = 64;
const MAX_BRANCH_NAME_CHARS = 200;

function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** What a summary says of a session's activity; a stored session that is not live has none. */
interface SessionActivity {
  clientCount: number;
  hasActivePrompt: boolean;
  pendingPromptCount: number;
}

const IDLE: SessionActivity = { clientCount: 0, hasActivePrompt: false, pendingPromptCount: 0 };

/** The summary of a live or stored session (no permission is open in either here). */
function summaryOf(
  session: Pick<
    StoredSessionSummary,
    'sessionId' | 'workspaceCwd' | 'cwd' | 'createdAt' | 'updatedAt' | 'displayName' | 'forkedFrom'
  >,
  activity: SessionActivity = IDLE,
): SessionSummary {
  const summary: SessionSummary = {
    sessionId: session.sessionId,
    workspaceCwd: session.workspaceCwd,
    cwd: session.cwd,
    createdAt: session.createdAt,
    updatedAt: session.updatedAt,
    clientCount: activity.clientCount,
    hasActivePrompt: activity.hasActivePrompt,
    pendingPromptCount: activity.pendingPromptCount,
    isWaitingForPermission: false,
    pendingInteractionCount: 0,
    pendingInteractions: [],
  };
  if (session.displayName !== undefined) summary.displayName = session.displayName;
  if (session.forkedFrom !== undefined) summary.forkedFrom = { ...session.forkedFrom };
  return summary;
}

function errorOutcome(error: unknown): PromptOutcome {
  const fields = typeof error === 'object' && error !== null ? (error as Record<string, unknown>) : {};
  const raw =
    error instanceof Error ? error.message : typeof error === 'string' ? error : 'Agent turn failed';
  const message = raw.length > MAX_ERROR_MESSAGE_CHARS ? `${raw.slice(0, MAX_ERROR_MESSAGE_CHARS)}…` : raw;
  const outcome: PromptOutcome = { kind: 'error', error, message };
  const code = fields['code'];
  if (typeof code === 'string' && CODE_PATTERN.test(code)) outcome.code = code;
  const errorKind = fields['errorKind'];
  if (typeof errorKind === 'string' && CODE_PATTERN.test(errorKind)) outcome.errorKind = errorKind;
  return outcome;
}

function isTurnResult(value: unknown): value is { stopReason: string; messages?: unknown[] } {
  if (typeof value !== 'object' || value === null) return false;
  const { stopReason, messages } = value as Record<string, unknown>;
  return (
    typeof stopReason === 'string' &&
    stopReason.length > 0 &&
    stopReason.length <= MAX_STOP_REASON_CHARS &&
    (messages === undefined || Array.isArray(messages))
  );
}

function assertPrompt(prompt: unknown): asserts prompt is readonly ContentBlock[] {
  if (!Array.isArray(prompt)) throw new InvalidPromptError(`got ${typeof prompt}`);
  if (prompt.length === 0) throw new InvalidPromptError('got an empty array');
  prompt.forEach((block: unknown, index) => {
    if (typeof block !== 'object' || block === null || typeof (block as { type?: unknown }).type !== 'string')
      throw new InvalidPromptError(`block ${index} is not an object with a string "type"`);
  });
}

/**
 * The admission authority of the daemon (SPEC BP-1…BP-10): sessions, each with one FIFO of
 * prompts and branches served one at a time by an {@link Agent}, a bounded count of pending
 * prompts, prompt deadlines, cancel/remove/close, clients and a bounded conversation history.
 * It knows neither HTTP nor the event bus: events go to a {@link SessionEventSink}.
 *
 * Admission (`sendPrompt`, `branchSession`, `createSession`) is synchronous: it throws a typed
 * error or accepts before returning. Every admitted prompt ends with exactly one terminal
 * event (`turn_complete` or `turn_error`), and its pending slot is released exactly once, in
 * the same step that settles the caller's `done` promise.
 */
export class SessionBridge {
  private readonly agent: Agent;
  private readonly sink: SessionEventSink;
  private readonly clock: Clock;
  private readonly wallNow: () => number;
  private readonly newId: () => string;
  private readonly store: SessionStore | undefined;
  private readonly maxPending: number;
  private readonly promptDeadlineMs: number | undefined;
  private readonly maxSessions: number;
  private readonly maxSessionsPerWorkspace: number;
  private readonly maxClientsPerSession: number;
  private readonly maxConversationMessages: number;
  private readonly maxConversationBytes: number;
  private readonly terminalEventDelayMs: number;
  private readonly workspaces: readonly string[] | undefined;
  private readonly onError: (error: unknown, context: string) => void;
  private readonly onTurnError: (failure: TurnFailure) => void;

  private readonly sessions = new Map<string, SessionEntry>();
  private readonly defaultSessions = new Map<string, string>();
  private readonly countByWorkspace = new Map<string, number>();
  private readonly reservedByWorkspace = new Map<string, number>();
  /** Store reads of sessions being restored, so that concurrent restores read once. */
  private readonly restoring = new Map<string, Promise<SessionRecord | undefined>>();
  private reservedTotal = 0;
  private accepting = true;

  constructor(options: SessionBridgeOptions) {
    const resolved = resolveBridgeOptions(options);
    this.agent = resolved.agent;
    this.sink = resolved.events;
    this.clock = resolved.clock;
    this.wallNow = resolved.wallClock;
    this.newId = resolved.newId;
    this.store = resolved.store;
    this.maxPending = resolved.maxPendingPromptsPerSession;
    this.promptDeadlineMs = resolved.promptDeadlineMs;
    this.maxSessions = resolved.maxSessions;
    this.maxSessionsPerWorkspace = resolved.maxSessionsPerWorkspace;
    this.maxClientsPerSession = resolved.maxClientsPerSession;
    this.maxConversationMessages = resolved.maxConversationMessages;
    this.maxConversationBytes = resolved.maxConversationBytes;
    this.terminalEventDelayMs = resolved.terminalEventDelayMs;
    this.workspaces = resolved.workspaces;
    this.onError = resolved.onError;
    this.onTurnError = resolved.onTurnError;
  }

  // ── capabilities and counters ───────────────────────────────────────────────────────

  /** The capability value of BP-9: the limit, or `null` when unlimited. */
  get maxPendingPromptsPerSession(): number | null {
    return this.maxPending === Infinity ? null : this.maxPending;
  }

  /** Everything `/capabilities` → `limits` reports about sessions. */
  get limits(): BridgeLimits {
    return {
      maxPendingPromptsPerSession: this.maxPendingPromptsPerSession,
      maxSessionsPerWorkspace:
        this.maxSessionsPerWorkspace === Infinity ? null : this.maxSessionsPerWorkspace,
      maxSessions: this.maxSessions === Infinity ? null : this.maxSessions,
      promptDeadlineMs: this.promptDeadlineMs ?? null,
    };
  }

  /** Live sessions, closing ones included. */
  get sessionCount(): number {
    return this.sessions.size;
  }

  /** Pending prompts over all sessions. */
  get pendingPromptTotal(): number {
    let total = 0;
    for (const entry of this.sessions.values()) total += entry.pendingPromptCount;
    return total;
  }

  /** Admitted, unsettled prompts of the session: queued plus running (SPEC BP-1). */
  pendingPromptCount(sessionId: string): number {
    return this.requireEntry(sessionId).pendingPromptCount;
  }

  // ── sessions ────────────────────────────────────────────────────────────────────────

  /**
   * Opens a session, or attaches to the workspace's default one (`single` scope). Throws
   * `InvalidCwdError`, `WorkspaceMismatchError`, `InvalidSessionScopeError`,
   * `InvalidSessionIdError`, `InvalidClientIdError` or `SessionLimitExceededError`.
   */
  createSession(request: CreateSessionRequest = {}): SessionHandle {
    const { scope, cwd, workspaceCwd } = this.checkCreate(request);
    if (request.sessionId !== undefined) {
      const existing = this.sessions.get(request.sessionId);
      if (existing !== undefined) {
        if (existing.state !== 'open') throw new SessionClosingError(existing.sessionId);
        if (existing.workspaceCwd !== workspaceCwd)
          throw new WorkspaceMismatchError(cwd, [existing.workspaceCwd]);
        return this.attach(existing, request.clientId, true);
      }
    } else if (scope === 'single') {
      const defaultId = this.defaultSessions.get(workspaceCwd);
      const existing = defaultId === undefined ? undefined : this.sessions.get(defaultId);
      if (existing?.state === 'open') return this.attach(existing, request.clientId, true);
    }
    const now = this.wallNow();
    const entry = this.openEntry(
      {
        sessionId: request.sessionId ?? this.newId(),
        workspaceCwd,
        cwd,
        scope: request.sessionId === undefined ? scope : 'thread',
        createdAt: now,
        updatedAt: now,
        conversation: [],
      },
      true,
    );
    if (entry.scope === 'single') this.defaultSessions.set(workspaceCwd, entry.sessionId);
    return this.attach(entry, request.clientId, false);
  }

  /** Checks a create request before anything is read or opened; its scope and workspace. */
  private checkCreate(request: CreateSessionRequest): {
    scope: SessionScope;
    cwd: string;
    workspaceCwd: string;
  } {
    if (!this.accepting) throw new BridgeShuttingDownError();
    const scope = request.scope ?? 'single';
    if (scope !== 'single' && scope !== 'thread') throw new InvalidSessionScopeError(scope);
    const { cwd, workspaceCwd } = this.resolveWorkspace(request.cwd);
    if (request.clientId !== undefined) assertClientIdFormat(request.clientId);
    const sessionId = request.sessionId;
    if (sessionId !== undefined && (typeof sessionId !== 'string' || !UUID_PATTERN.test(sessionId)))
      throw new InvalidSessionIdError(sessionId);
    return { scope, cwd, workspaceCwd };
  }

  /**
   * {@link createSession} for callers that may choose the id (`POST /session`): a chosen id
   * that is not live but stored (a session of an earlier daemon lifetime) is refused with
   * `SessionIdConflictError` — creating it afresh would replace its stored history with an
   * empty one on the first save. The caller restores it with {@link restoreSession} instead.
   * The arguments are checked before the store is read; without a chosen id, or without a
   * store, this is `createSession`.
   */
  async openSession(request: CreateSessionRequest = {}): Promise<SessionHandle> {
    const sessionId = request.sessionId;
    if (sessionId === undefined || this.store === undefined || this.sessions.has(sessionId))
      return this.createSession(request);
    this.checkCreate(request);
    const record = await this.loadStored(sessionId);
    // Live by now (a restore or a create of this id won the race): attach as createSession does.
    if (record !== undefined && !this.sessions.has(sessionId))
      throw new SessionIdConflictError(sessionId, record.workspaceCwd);
    return this.createSession(request);
  }

  /**
   * Brings back a session: attaches to it when live, else loads it from the store (after a
   * restart). Rejects with `SessionNotFoundError` when neither has it, and checks `cwd` (see
   * {@link RestoreSessionOptions.cwd}) before anything is opened.
   */
  async restoreSession(sessionId: string, options: RestoreSessionOptions = {}): Promise<SessionHandle> {
    if (options.clientId !== undefined) assertClientIdFormat(options.clientId);
    const expected = options.cwd === undefined ? undefined : this.resolveWorkspace(options.cwd).workspaceCwd;
    const live = this.sessions.get(sessionId);
    if (live !== undefined) return this.attachRestored(live, expected, options.clientId);
    if (!this.accepting) throw new BridgeShuttingDownError();
    const record = await this.loadStored(sessionId);
    // A concurrent restore (or a create with this id) may have opened it meanwhile.
    const opened = this.sessions.get(sessionId);
    if (opened !== undefined) return this.attachRestored(opened, expected, options.clientId);
    if (record === undefined) throw new SessionNotFoundError(sessionId);
    if (expected !== undefined && record.workspaceCwd !== expected) throw new SessionNotFoundError(sessionId);
    if (!this.accepting) throw new BridgeShuttingDownError();
    const entry = this.openRestored(record, options.mode ?? 'resume');
    return this.attach(entry, options.clientId, false);
  }

  /** The stored record of a session; concurrent reads of one id share one store read. */
  private loadStored(sessionId: string): Promise<SessionRecord | undefined> {
    let loading = this.restoring.get(sessionId);
    if (loading === undefined) {
      loading = this.store === undefined ? Promise.resolve(undefined) : this.store.load(sessionId);
      this.restoring.set(sessionId, loading);
      const forget = (): void => {
        this.restoring.delete(sessionId);
      };
      loading.then(forget, forget);
    }
    return loading;
  }

  /** Summary of one session (PROTOCOL §4 status). */
  status(sessionId: string): SessionSummary {
    return this.summarize(this.requireOpen(sessionId));
  }

  /** Summaries of the open sessions, optionally of one workspace, oldest first. */
  listSessions(workspaceCwd?: string): SessionSummary[] {
    const root = workspaceCwd === undefined ? undefined : resolve(workspaceCwd);
    const result: SessionSummary[] = [];
    for (const entry of this.sessions.values())
      if (entry.state === 'open' && (root === undefined || entry.workspaceCwd === root))
        result.push(this.summarize(entry));
    return result;
  }

  /**
   * One page of the sessions of the workspace `cwd` lies in (PROTOCOL §4): the stored ones —
   * so that after a restart a client can find what to load — merged with the live ones, whose
   * summary wins. Newest first by `createdAt` (`ListPosition`), so paging is stable however
   * busy the sessions are. A page reads at most `size + 1` stored rows and scans the live
   * sessions (bounded by the session caps). Throws `InvalidCwdError`, `WorkspaceMismatchError`,
   * `InvalidSessionCursorError` and, for a size outside [1, 1000], a `RangeError`.
   */
  async listWorkspaceSessions(cwd: unknown, options: SessionListOptions = {}): Promise<SessionSummaryPage> {
    const { workspaceCwd } = this.resolveWorkspace(cwd);
    const size = listPageSize(options.size);
    const after = options.cursor === undefined ? undefined : decodeListCursor(options.cursor);
    const stored =
      this.store?.list === undefined
        ? { sessions: [] }
        : await this.store.list(workspaceCwd, {
            size,
            ...(options.cursor === undefined ? {} : { cursor: options.cursor }),
          });
    const byId = new Map<string, SessionSummary>();
    for (const session of stored.sessions) byId.set(session.sessionId, summaryOf(session));
    for (const entry of this.sessions.values())
      if (
        entry.state === 'open' &&
        entry.workspaceCwd === workspaceCwd &&
        (after === undefined || compareListPosition(after, entry) < 0)
      )
        byId.set(entry.sessionId, this.summarize(entry));
    const merged = [...byId.values()].sort(compareListPosition);
    const sessions = merged.slice(0, size);
    const last = sessions.at(-1);
    const more = merged.length > size || stored.nextCursor !== undefined;
    return more && last !== undefined ? { sessions, nextCursor: encodeListCursor(last) } : { sessions };
  }

  /** A copy of the session's (bounded) conversation history, oldest first. */
  conversation(sessionId: string): ConversationMessage[] {
    return this.requireOpen(sessionId).conversation.snapshot();
  }

  /**
   * Closes the session: every pending prompt ends with `turn_error {code:'session_closed'}`
   * (the running one is also aborted), queued branches reject, then `session_closed` is
   * published. The session answers `session_closing` until the running agent returned; the
   * promise resolves then. Closing a closing session returns the same promise.
   */
  closeSession(sessionId: string, options: CloseSessionOptions = {}): Promise<void> {
    const entry = this.sessions.get(sessionId);
    if (entry === undefined) throw new SessionNotFoundError(sessionId);
    if (entry.state === 'open') this.beginClose(entry, options.reason ?? 'client_close', options.clientId);
    return entry.closed.promise;
  }

  /** Closes every session (reason `daemon_shutdown`) and refuses new ones. */
  async shutdown(reason = 'daemon_shutdown'): Promise<void> {
    this.accepting = false;
    const closing: Promise<void>[] = [];
    for (const entry of [...this.sessions.values()]) {
      if (entry.state === 'open') this.beginClose(entry, reason, undefined);
      closing.push(entry.closed.promise);
    }
    await Promise.all(closing);
  }

  // ── clients ─────────────────────────────────────────────────────────────────────────

  /** Registers a client on the session (`clientId`, or a fresh one) — the `resume` path. */
  attachClient(sessionId: string, clientId?: string): SessionHandle {
    if (clientId !== undefined) assertClientIdFormat(clientId);
    return this.attach(this.requireOpen(sessionId), clientId, true);
  }

  /** Removes a client; throws `InvalidClientIdError` when it is not registered. */
  detachClient(sessionId: string, clientId: string): void {
    assertClientIdFormat(clientId);
    const entry = this.requireOpen(sessionId);
    if (!entry.clients.remove(clientId)) throw new InvalidClientIdError(clientId, sessionId);
  }

  /** Whether `clientId` is registered on the session. */
  hasClient(sessionId: string, clientId: string): boolean {
    return this.requireOpen(sessionId).clients.has(clientId);
  }

  /** Marks the client as seen now; throws `InvalidClientIdError` for an unregistered one. */
  heartbeat(sessionId: string, clientId?: string): HeartbeatResult {
    const entry = this.requireOpen(sessionId);
    if (clientId === undefined) return { sessionId, lastSeenAt: this.wallNow() };
    assertClientIdFormat(clientId);
    const record = this.touchClient(entry, clientId);
    return { sessionId, clientId, lastSeenAt: record.lastSeenAt };
  }

  // ── prompts ─────────────────────────────────────────────────────────────────────────

  /**
   * Admits a prompt or throws — synchronously, never awaiting before deciding (SPEC BP-6):
   * argument checks (`InvalidPromptError`, `InvalidDeadlineError`, `InvalidClientIdError`),
   * then 1. the session (`SessionNotFoundError`, `SessionClosingError`; an unregistered
   * `clientId` → `InvalidClientIdError`), 2. an already aborted `signal` (`PromptAbortedError`,
   * before the counter moves), 3. the limit (`PromptQueueFullError`), 4. count and append to
   * the FIFO. The caller must read the event stream's `lastEventId` *before* calling this:
   * events of the prompt (`pending_prompt_added`, the user echo) are published during the call.
   */
  sendPrompt(
    sessionId: string,
    prompt: readonly ContentBlock[],
    options: SendPromptOptions = {},
  ): PromptAdmission {
    const admission = this.trySendPrompt(sessionId, prompt, options);
    if (admission instanceof PromptQueueFullError) throw admission;
    return admission;
  }

  /**
   * {@link sendPrompt}, except that a full queue is returned instead of thrown (every other
   * refusal still throws). For callers that refuse at the rate prompts arrive, the HTTP route
   * under overload (SPEC BP-8): a `throw` makes V8 locate the throwing source position, which
   * costs more than the rest of the refusal.
   */
  trySendPrompt(
    sessionId: string,
    prompt: readonly ContentBlock[],
    options: SendPromptOptions = {},
  ): PromptAdmission | PromptQueueFullError {
    assertPrompt(prompt);
    const deadlineMs = this.effectiveDeadline(options.deadlineMs);
    if (options.clientId !== undefined) assertClientIdFormat(options.clientId);
    const entry = this.requireOpen(sessionId);
    if (options.clientId !== undefined) this.touchClient(entry, options.clientId);
    const signal = options.signal;
    if (signal?.aborted) throw new PromptAbortedError(sessionId, signal.reason);
    if (entry.pendingPromptCount >= this.maxPending) return this.queueFull(entry);

    entry.pendingPromptCount++;
    const ticket: PromptTicket = {
      kind: 'prompt',
      promptId: this.newId(),
      prompt: prompt.slice(),
      text: promptText(prompt),
      queuedAt: this.wallNow(),
      admittedAt: this.clock.now(),
      clientId: options.clientId,
      queuedBehind: entry.busy,
      deadlineMs,
      deferred: createDeferred<PromptResult>(),
      phase: 'queued',
      node: undefined,
      controller: undefined,
      timer: undefined,
      cancelRequested: false,
      agentDone: false,
      dirty: false,
      pendingOutcome: undefined,
      detachSignal: undefined,
    };
    entry.prompts.set(ticket.promptId, ticket);
    entry.updatedAt = ticket.queuedAt;
    if (deadlineMs !== undefined)
      ticket.timer = this.clock.setTimer(
        () => this.guard('deadline', () => this.onDeadline(entry, ticket)),
        deadlineMs,
      );
    if (signal !== undefined) {
      const onAbort = (): void => this.guard('signal', () => this.cancelTicket(entry, ticket));
      signal.addEventListener('abort', onAbort, { once: true });
      ticket.detachSignal = () => signal.removeEventListener('abort', onAbort);
    }
    ticket.node = entry.queue.enqueue(ticket);
    if (ticket.queuedBehind)
      this.promptEvent(entry, ticket, SESSION_EVENT.pendingPromptAdded, {
        sessionId,
        promptId: ticket.promptId,
        text: ticket.text,
        queuedAt: ticket.queuedAt,
      });
    else this.pump(entry);
    return { promptId: ticket.promptId, queued: ticket.queuedBehind, done: ticket.deferred.promise };
  }

  /** The session's pending prompts, the running one first, then the queue in FIFO order. */
  pendingPrompts(sessionId: string): PendingPromptInfo[] {
    const entry = this.requireOpen(sessionId);
    const result: PendingPromptInfo[] = [];
    const active = entry.active;
    if (active?.kind === 'prompt' && active.phase !== 'settled')
      result.push(this.describe(active, 'running'));
    for (const item of entry.queue) if (item.kind === 'prompt') result.push(this.describe(item, 'queued'));
    return result;
  }

  /**
   * Aborts the running prompt only; it ends `turn_complete {stopReason:'cancelled'}` once the
   * agent returns. Publishes `prompt_cancelled`. Returns false when no prompt was running.
   */
  cancel(sessionId: string): boolean {
    const entry = this.requireOpen(sessionId);
    const active = entry.active;
    if (active?.kind !== 'prompt') return false;
    return this.cancelTicket(entry, active);
  }

  /**
   * Removes a queued prompt in O(1) (`turn_complete {stopReason:'cancelled'}` +
   * `pending_prompt_completed {state:'removed'}`) or cancels the running one. Returns false
   * when the prompt is unknown or already ending.
   */
  removePendingPrompt(sessionId: string, promptId: string): boolean {
    const entry = this.requireOpen(sessionId);
    const ticket = entry.prompts.get(promptId);
    return ticket === undefined ? false : this.cancelTicket(entry, ticket);
  }

  // ── branching ───────────────────────────────────────────────────────────────────────

  /**
   * Forks the session: a new `thread` session with a copy of the conversation. Admission is
   * synchronous — `BranchWhilePromptActiveError` while any prompt is pending (queued or
   * running), `SessionLimitExceededError` when no session could be opened — and the branch
   * then waits in the same FIFO as prompts, so it runs after everything ahead of it and
   * prompts sent after it wait for it. It consumes no prompt slot (SPEC BP-3).
   */
  branchSession(sessionId: string, options: BranchSessionOptions = {}): Promise<BranchedSession> {
    const name = options.name === undefined ? undefined : this.validateBranchName(options.name);
    if (options.clientId !== undefined) assertClientIdFormat(options.clientId);
    const entry = this.requireOpen(sessionId);
    if (entry.pendingPromptCount > 0) throw new BranchWhilePromptActiveError(sessionId);
    this.assertCapacity(entry.workspaceCwd);
    this.reserve(entry.workspaceCwd, 1);
    const ticket: BranchTicket = {
      kind: 'branch',
      name,
      clientId: options.clientId,
      deferred: createDeferred<BranchedSession>(),
      node: undefined,
    };
    ticket.node = entry.queue.enqueue(ticket);
    this.pump(entry);
    return ticket.deferred.promise;
  }

  // ── the runner ──────────────────────────────────────────────────────────────────────

  /** Starts queued items while the runner is free. */
  private pump(entry: SessionEntry): void {
    while (!entry.busy && entry.state === 'open') {
      const item = entry.queue.dequeue();
      if (item === undefined) return;
      item.node = undefined;
      if (item.kind === 'prompt') this.startPrompt(entry, item);
      else this.startBranch(entry, item);
    }
  }

  private startPrompt(entry: SessionEntry, ticket: PromptTicket): void {
    entry.busy = true;
    entry.active = ticket;
    ticket.phase = 'running';
    const controller = new AbortController();
    ticket.controller = controller;
    const { sessionId } = entry;
    if (ticket.queuedBehind)
      this.promptEvent(entry, ticket, SESSION_EVENT.pendingPromptStarted, {
        sessionId,
        promptId: ticket.promptId,
        text: ticket.text,
      });
    this.promptEvent(entry, ticket, SESSION_EVENT.sessionUpdate, {
      sessionId,
      update: { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: ticket.text } },
    });
    const turn: AgentTurn = {
      sessionId,
      promptId: ticket.promptId,
      prompt: ticket.prompt,
      conversation: entry.conversation.snapshot(),
      signal: controller.signal,
      emit: (update) => this.emitUpdate(entry, ticket, update),
    };
    // The agent starts on a microtask: admission never runs agent code, and nothing the
    // agent does re-enters the bridge while it is mid-admission.
    Promise.resolve()
      .then<unknown>(() => (controller.signal.aborted ? SKIPPED : this.agent.runTurn(turn)))
      .then(
        (result) =>
          this.onAgentSettled(
            entry,
            ticket,
            result === SKIPPED ? { type: 'skipped' } : { type: 'returned', result },
          ),
        (error: unknown) => this.onAgentSettled(entry, ticket, { type: 'threw', error }),
      );
  }

  private emitUpdate(entry: SessionEntry, ticket: PromptTicket, update: SessionUpdate): void {
    if (typeof update !== 'object' || update === null || typeof update.sessionUpdate !== 'string')
      throw new TypeError(
        `emit expects an object with a string "sessionUpdate", got ${JSON.stringify(update)}`,
      );
    if (ticket.phase !== 'running' || entry.state !== 'open') return;
    this.promptEvent(entry, ticket, SESSION_EVENT.sessionUpdate, { sessionId: entry.sessionId, update });
  }

  private onAgentSettled(entry: SessionEntry, ticket: PromptTicket, outcome: AgentOutcome): void {
    this.guard('agent', () => {
      ticket.agentDone = true;
      if (ticket.phase === 'running') {
        let decided: PromptOutcome;
        if (outcome.type === 'returned' && isTurnResult(outcome.result)) {
          this.record(entry, ticket, outcome.result.messages);
          decided = {
            kind: 'complete',
            stopReason: ticket.cancelRequested ? 'cancelled' : outcome.result.stopReason,
          };
        } else if (ticket.cancelRequested || outcome.type === 'skipped') {
          decided = { kind: 'complete', stopReason: 'cancelled' };
        } else if (outcome.type === 'threw') {
          decided = errorOutcome(outcome.error);
        } else {
          decided = errorOutcome(new InvalidTurnResultError(ticket.promptId));
        }
        this.decide(entry, ticket, decided);
      }
      this.releaseRunner(entry, ticket);
    });
  }

  /** Publishes the agent-decided outcome now, or after `terminalEventDelayMs` from admission. */
  private decide(entry: SessionEntry, ticket: PromptTicket, outcome: PromptOutcome): void {
    const wait = ticket.admittedAt + this.terminalEventDelayMs - this.clock.now();
    if (wait <= 0) {
      this.settlePrompt(entry, ticket, outcome);
      return;
    }
    ticket.phase = 'finishing';
    ticket.pendingOutcome = outcome;
    this.clearTimer(ticket);
    ticket.timer = this.clock.setTimer(
      () =>
        this.guard('terminal delay', () => {
          ticket.timer = undefined;
          const pending = ticket.pendingOutcome;
          if (ticket.phase !== 'finishing' || pending === undefined) return;
          this.settlePrompt(entry, ticket, pending);
          this.releaseRunner(entry, ticket);
        }),
      wait,
    );
  }

  /** Frees the runner once the prompt settled and its agent returned; saves, then goes on. */
  private releaseRunner(entry: SessionEntry, ticket: PromptTicket): void {
    if (entry.active !== ticket || ticket.phase !== 'settled' || !ticket.agentDone) return;
    entry.active = undefined;
    if (ticket.dirty && entry.state === 'open' && this.store !== undefined) {
      ticket.dirty = false;
      void this.persist(entry).then(() => this.runnerIdle(entry));
    } else this.runnerIdle(entry);
  }

  private runnerIdle(entry: SessionEntry): void {
    this.guard('runner', () => {
      entry.busy = false;
      if (entry.state === 'closing') this.finishClose(entry);
      else this.pump(entry);
    });
  }

  private startBranch(entry: SessionEntry, ticket: BranchTicket): void {
    entry.busy = true;
    entry.active = ticket;
    this.reserve(entry.workspaceCwd, -1);
    let child: SessionEntry;
    let result: BranchedSession;
    try {
      const now = this.wallNow();
      const displayName = ticket.name ?? `${this.baseName(entry)} (Branch)`;
      child = this.openEntry(
        {
          sessionId: this.newId(),
          workspaceCwd: entry.workspaceCwd,
          cwd: entry.cwd,
          scope: 'thread',
          createdAt: now,
          updatedAt: now,
          displayName,
          forkedFrom: { sessionId: entry.sessionId },
          conversation: entry.conversation.snapshot(),
        },
        false,
      );
      const client = child.clients.register(ticket.clientId ?? this.newId(), now);
      result = {
        sessionId: child.sessionId,
        workspaceCwd: child.workspaceCwd,
        attached: false,
        clientId: client.clientId,
        createdAt: child.createdAt,
        displayName,
        forkedFrom: { sessionId: entry.sessionId },
      };
      this.publish(entry.sessionId, {
        type: SESSION_EVENT.sessionBranched,
        data: { sourceSessionId: entry.sessionId, newSessionId: child.sessionId, displayName },
        ...(ticket.clientId === undefined ? {} : { originatorClientId: ticket.clientId }),
      });
    } catch (error) {
      ticket.deferred.reject(error);
      entry.active = undefined;
      entry.busy = false; // the pump loop that started this branch goes on
      return;
    }
    void this.persist(child).then(() => {
      ticket.deferred.resolve(result);
      entry.active = undefined;
      this.runnerIdle(entry);
    });
  }

  // ── ending prompts ──────────────────────────────────────────────────────────────────

  /**
   * Ends a prompt exactly once: releases its slot, publishes its one terminal event (and
   * `pending_prompt_completed` when it had queued), and settles the caller's promise.
   */
  private settlePrompt(entry: SessionEntry, ticket: PromptTicket, outcome: PromptOutcome): void {
    if (ticket.phase === 'settled') return;
    const neverRan = ticket.phase === 'queued';
    ticket.phase = 'settled';
    ticket.pendingOutcome = undefined;
    if (neverRan) ticket.agentDone = true;
    this.clearTimer(ticket);
    ticket.detachSignal?.();
    ticket.detachSignal = undefined;
    entry.prompts.delete(ticket.promptId);
    entry.pendingPromptCount--;
    entry.updatedAt = this.wallNow();

    const { sessionId } = entry;
    const { promptId } = ticket;
    if (outcome.kind === 'complete') {
      this.promptEvent(entry, ticket, SESSION_EVENT.turnComplete, {
        sessionId,
        promptId,
        stopReason: outcome.stopReason,
      });
    } else {
      const data: Record<string, unknown> = { sessionId, promptId, message: outcome.message };
      if (outcome.code !== undefined) data['code'] = outcome.code;
      if (outcome.errorKind !== undefined) data['errorKind'] = outcome.errorKind;
      this.promptEvent(entry, ticket, SESSION_EVENT.turnError, data);
      const failure = { sessionId, promptId, code: outcome.code, errorKind: outcome.errorKind };
      this.guard(`onTurnError ${promptId}`, () => this.onTurnError(failure));
    }
    if (ticket.queuedBehind)
      this.promptEvent(entry, ticket, SESSION_EVENT.pendingPromptCompleted, {
        sessionId,
        promptId,
        state: neverRan ? 'removed' : 'completed',
      });
    if (outcome.kind === 'complete') ticket.deferred.resolve({ promptId, stopReason: outcome.stopReason });
    else ticket.deferred.reject(outcome.error);
  }

  /** Removes a queued prompt, or aborts the running one; false when it is already ending. */
  private cancelTicket(entry: SessionEntry, ticket: PromptTicket): boolean {
    if (entry.state !== 'open') return false;
    if (ticket.phase === 'queued') {
      this.unqueue(entry, ticket);
      this.settlePrompt(entry, ticket, { kind: 'complete', stopReason: 'cancelled' });
      return true;
    }
    if (ticket.phase !== 'running' || ticket.cancelRequested) return false;
    ticket.cancelRequested = true;
    this.abortTurn(entry, ticket, undefined, 'cancel');
    return true;
  }

  private onDeadline(entry: SessionEntry, ticket: PromptTicket): void {
    ticket.timer = undefined;
    if (ticket.phase !== 'queued' && ticket.phase !== 'running') return;
    const error = new PromptDeadlineExceededError(entry.sessionId, ticket.promptId, ticket.deadlineMs ?? 0);
    const wasRunning = ticket.phase === 'running';
    if (!wasRunning) this.unqueue(entry, ticket);
    this.settlePrompt(entry, ticket, errorOutcome(error));
    if (wasRunning) this.abortTurn(entry, ticket, error, 'deadline');
  }

  private abortTurn(
    entry: SessionEntry,
    ticket: PromptTicket,
    reason: unknown,
    why: 'cancel' | 'deadline',
  ): void {
    this.promptEvent(entry, ticket, SESSION_EVENT.promptCancelled, {
      sessionId: entry.sessionId,
      promptId: ticket.promptId,
      reason: why,
    });
    ticket.controller?.abort(reason);
  }

  private unqueue(entry: SessionEntry, ticket: PromptTicket): void {
    if (ticket.node !== undefined) entry.queue.remove(ticket.node);
    ticket.node = undefined;
  }

  private clearTimer(ticket: PromptTicket): void {
    if (ticket.timer === undefined) return;
    this.clock.clearTimer(ticket.timer);
    ticket.timer = undefined;
  }

  // ── closing ─────────────────────────────────────────────────────────────────────────

  private beginClose(entry: SessionEntry, reason: string, clientId: string | undefined): void {
    entry.state = 'closing';
    if (this.defaultSessions.get(entry.workspaceCwd) === entry.sessionId)
      this.defaultSessions.delete(entry.workspaceCwd);
    const error = new SessionClosedError(entry.sessionId, reason);
    const outcome = errorOutcome(error);
    const active = entry.active;
    if (active?.kind === 'prompt' && active.phase !== 'settled') {
      this.settlePrompt(entry, active, outcome);
      active.controller?.abort(error);
    }
    for (let item = entry.queue.dequeue(); item !== undefined; item = entry.queue.dequeue()) {
      item.node = undefined;
      if (item.kind === 'prompt') this.settlePrompt(entry, item, outcome);
      else {
        this.reserve(entry.workspaceCwd, -1);
        item.deferred.reject(error);
      }
    }
    const data: Record<string, unknown> = { sessionId: entry.sessionId, reason };
    if (clientId !== undefined) data['closedBy'] = clientId;
    this.publish(entry.sessionId, {
      type: SESSION_EVENT.sessionClosed,
      data,
      ...(clientId === undefined ? {} : { originatorClientId: clientId }),
    });
    // A prompt whose agent already returned (its terminal event was waiting for the delay)
    // frees the runner now; a running agent frees it when it returns.
    if (active?.kind === 'prompt') this.releaseRunner(entry, active);
    if (!entry.busy) this.finishClose(entry);
  }

  private finishClose(entry: SessionEntry): void {
    if (entry.state === 'closed') return;
    entry.state = 'closed';
    this.sessions.delete(entry.sessionId);
    const remaining = (this.countByWorkspace.get(entry.workspaceCwd) ?? 1) - 1;
    if (remaining > 0) this.countByWorkspace.set(entry.workspaceCwd, remaining);
    else this.countByWorkspace.delete(entry.workspaceCwd);
    entry.closed.resolve();
  }

  // ── helpers ─────────────────────────────────────────────────────────────────────────

  private openEntry(params: OpenEntryParams, save: boolean): SessionEntry {
    this.assertCapacity(params.workspaceCwd);
    const entry: SessionEntry = {
      sessionId: params.sessionId,
      workspaceCwd: params.workspaceCwd,
      cwd: params.cwd,
      scope: params.scope,
      createdAt: params.createdAt,
      updatedAt: params.updatedAt,
      displayName: params.displayName,
      forkedFrom: params.forkedFrom,
      state: 'open',
      queue: new LinkedQueue<QueueItem>(),
      busy: false,
      active: undefined,
      pendingPromptCount: 0,
      queueFull: undefined,
      prompts: new Map(),
      conversation: new ConversationLog(
        this.maxConversationMessages,
        this.maxConversationBytes,
        params.conversation,
      ),
      clients: new ClientRegistry(this.maxClientsPerSession),
      saving: Promise.resolve(),
      closed: createDeferred<void>(),
    };
    this.sessions.set(entry.sessionId, entry);
    this.countByWorkspace.set(entry.workspaceCwd, (this.countByWorkspace.get(entry.workspaceCwd) ?? 0) + 1);
    if (save) void this.persist(entry);
    return entry;
  }

  /** A restore found the session live: attach, unless it is closing or lives elsewhere. */
  private attachRestored(
    entry: SessionEntry,
    expectedWorkspace: string | undefined,
    clientId: string | undefined,
  ): SessionHandle {
    if (entry.state !== 'open') throw new SessionClosingError(entry.sessionId);
    if (expectedWorkspace !== undefined && entry.workspaceCwd !== expectedWorkspace)
      throw new SessionWorkspaceConflictError(entry.sessionId, expectedWorkspace, entry.workspaceCwd);
    return this.attach(entry, clientId, true);
  }

  /** Opens a stored session; `load` also replays its history as `session_update` events. */
  private openRestored(record: SessionRecord, mode: 'load' | 'resume'): SessionEntry {
    const { sessionId } = record;
    const workspaces = this.workspaces;
    if (workspaces !== undefined && !workspaces.some((root) => isInside(record.workspaceCwd, root)))
      throw new WorkspaceMismatchError(record.workspaceCwd, workspaces);
    const entry = this.openEntry(
      { ...record, conversation: record.conversation.filter(isConversationMessage) },
      false,
    );
    if (entry.scope === 'single' && !this.defaultSessions.has(entry.workspaceCwd))
      this.defaultSessions.set(entry.workspaceCwd, entry.sessionId);
    if (mode === 'load')
      for (const message of entry.conversation.snapshot()) {
        if (message.role === 'tool') continue;
        this.publish(sessionId, {
          type: SESSION_EVENT.sessionUpdate,
          data: {
            sessionId,
            update: {
              sessionUpdate: message.role === 'user' ? 'user_message_chunk' : 'agent_message_chunk',
              content: { type: 'text', text: message.content },
            },
          },
        });
      }
    return entry;
  }

  /** Queues a save of the session's current state behind its earlier saves; never rejects. */
  private persist(entry: SessionEntry): Promise<void> {
    const store = this.store;
    if (store === undefined) return Promise.resolve();
    const record: SessionRecord = {
      sessionId: entry.sessionId,
      workspaceCwd: entry.workspaceCwd,
      cwd: entry.cwd,
      scope: entry.scope,
      createdAt: entry.createdAt,
      updatedAt: entry.updatedAt,
      conversation: entry.conversation.snapshot(),
    };
    if (entry.displayName !== undefined) record.displayName = entry.displayName;
    if (entry.forkedFrom !== undefined) record.forkedFrom = { ...entry.forkedFrom };
    entry.saving = entry.saving
      .then(() => store.save(record))
      .then(undefined, (error: unknown) => {
        this.onError(error, `store.save ${entry.sessionId}`);
        if (entry.state === 'open')
          this.publish(entry.sessionId, {
            type: SESSION_EVENT.sessionRecordingDegraded,
            data: { sessionId: entry.sessionId, reason: 'write_failed' },
          });
      });
    return entry.saving;
  }

  private record(entry: SessionEntry, ticket: PromptTicket, messages: unknown[] | undefined): void {
    entry.conversation.append({ role: 'user', content: ticket.text });
    for (const message of messages ?? [])
      if (isConversationMessage(message)) entry.conversation.append(message);
    entry.updatedAt = this.wallNow();
    ticket.dirty = true;
  }

  private attach(entry: SessionEntry, clientId: string | undefined, attached: boolean): SessionHandle {
    const client = entry.clients.register(clientId ?? this.newId(), this.wallNow());
    return {
      sessionId: entry.sessionId,
      workspaceCwd: entry.workspaceCwd,
      attached,
      clientId: client.clientId,
      createdAt: entry.createdAt,
    };
  }

  private touchClient(entry: SessionEntry, clientId: string): { lastSeenAt: number } {
    const record = entry.clients.touch(clientId, this.wallNow());
    if (record === undefined) throw new InvalidClientIdError(clientId, entry.sessionId);
    return record;
  }

  /**
   * The refusal of a full queue. Under overload a session refuses at the rate prompts arrive, and
   * every refusal while the count stands is the same value (no stack, immutable fields), so one
   * instance serves them all instead of an `Error` built per refusal (SPEC BP-8).
   */
  private queueFull(entry: SessionEntry): PromptQueueFullError {
    const last = entry.queueFull;
    if (last !== undefined && last.pendingCount === entry.pendingPromptCount) return last;
    return (entry.queueFull = new PromptQueueFullError(
      entry.sessionId,
      this.maxPending,
      entry.pendingPromptCount,
    ));
  }

  private requireEntry(sessionId: string): SessionEntry {
    const entry = this.sessions.get(sessionId);
    if (entry === undefined) throw new SessionNotFoundError(sessionId);
    return entry;
  }

  private requireOpen(sessionId: string): SessionEntry {
    const entry = this.requireEntry(sessionId);
    if (entry.state !== 'open') throw new SessionClosingError(sessionId);
    return entry;
  }

  private resolveWorkspace(cwd: unknown): { cwd: string; workspaceCwd: string } {
    const workspaces = this.workspaces;
    if (cwd === undefined && workspaces !== undefined && workspaces[0] !== undefined)
      return { cwd: workspaces[0], workspaceCwd: workspaces[0] };
    if (typeof cwd !== 'string' || !isAbsolute(cwd)) throw new InvalidCwdError(cwd);
    const normalized = resolve(cwd);
    if (workspaces === undefined) return { cwd: normalized, workspaceCwd: normalized };
    let best: string | undefined;
    for (const root of workspaces)
      if (isInside(normalized, root) && (best === undefined || root.length > best.length)) best = root;
    if (best === undefined) throw new WorkspaceMismatchError(normalized, workspaces);
    return { cwd: normalized, workspaceCwd: best };
  }

  private assertCapacity(workspaceCwd: string): void {
    if (this.sessions.size + this.reservedTotal >= this.maxSessions)
      throw new SessionLimitExceededError(this.maxSessions, 'daemon');
    const inWorkspace =
      (this.countByWorkspace.get(workspaceCwd) ?? 0) + (this.reservedByWorkspace.get(workspaceCwd) ?? 0);
    if (inWorkspace >= this.maxSessionsPerWorkspace)
      throw new SessionLimitExceededError(this.maxSessionsPerWorkspace, 'workspace', workspaceCwd);
  }

  /** Holds (`+1`) or gives back (`-1`) room for a queued branch's future session. */
  private reserve(workspaceCwd: string, delta: 1 | -1): void {
    this.reservedTotal += delta;
    const count = (this.reservedByWorkspace.get(workspaceCwd) ?? 0) + delta;
    if (count > 0) this.reservedByWorkspace.set(workspaceCwd, count);
    else this.reservedByWorkspace.delete(workspaceCwd);
  }

  private effectiveDeadline(requested: unknown): number | undefined {
    if (requested === undefined) return this.promptDeadlineMs;
    if (
      typeof requested !== 'number' ||
      !Number.isInteger(requested) ||
      requested < 1 ||
      requested > this.clock.maxTimerMs
    )
      throw new InvalidDeadlineError(requested, this.clock.maxTimerMs);
    return this.promptDeadlineMs === undefined ? requested : Math.min(requested, this.promptDeadlineMs);
  }

  private validateBranchName(name: unknown): string {
    if (typeof name !== 'string' || name.trim().length === 0 || name.length > MAX_BRANCH_NAME_CHARS)
      throw new InvalidBranchNameError(name);
    return name.trim();
  }

  private baseName(entry: SessionEntry): string {
    if (entry.displayName !== undefined) return entry.displayName.replace(/\s*\(Branch\)$/, '');
    const first = entry.conversation
      .snapshot()
      .find((message) => message.role === 'user')
      ?.content.trim();
    return first ? first.slice(0, 60) : entry.sessionId.slice(0, 8);
  }

  private describe(ticket: PromptTicket, state: 'running' | 'queued'): PendingPromptInfo {
    const info: PendingPromptInfo = {
      promptId: ticket.promptId,
      text: ticket.text,
      queuedAt: ticket.queuedAt,
      state,
    };
    if (ticket.clientId !== undefined) info.originatorClientId = ticket.clientId;
    return info;
  }

  private summarize(entry: SessionEntry): SessionSummary {
    const active = entry.active;
    return summaryOf(entry, {
      clientCount: entry.clients.size,
      hasActivePrompt:
        active?.kind === 'prompt' && (active.phase === 'running' || active.phase === 'finishing'),
      pendingPromptCount: entry.pendingPromptCount,
    });
  }

  private promptEvent(
    entry: SessionEntry,
    ticket: PromptTicket,
    type: string,
    data: Record<string, unknown>,
  ): void {
    const event: SessionEvent = { type, data, promptId: ticket.promptId };
    if (ticket.clientId !== undefined) event.originatorClientId = ticket.clientId;
    this.publish(entry.sessionId, event);
  }

  private publish(sessionId: string, event: SessionEvent): void {
    try {
      this.sink.publish(sessionId, event);
    } catch (error) {
      this.onError(error, `publish ${event.type}`);
    }
  }

  /** Runs bridge-internal work from a timer, listener or promise callback; never throws. */
  private guard(context: string, work: () => void): void {
    try {
      work();
    } catch (error) {
      this.onError(error, context);
    }
  }
}
