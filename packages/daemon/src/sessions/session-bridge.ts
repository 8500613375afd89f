import type { EventBus } from '../events/index.js';
import type { ContentBlock, ConversationMessage } from './agent.js';
import { PromptAdmitter, type PromptAdmission, type SendPromptOptions } from './admission.js';
import { Brancher, type BranchSessionOptions } from './branching.js';
import { SessionCapacity } from './capacity.js';
import { assertClientIdFormat } from './clients.js';
import { InvalidClientIdError, PromptQueueFullError, SessionNotFoundError } from './errors.js';
import { resolveBridgeOptions, type SessionBridgeOptions } from './options.js';
import { observedAdmitter } from './observed-admission.js';
import { SessionPersistence } from './persistence.js';
import type { BranchedSession, PendingPromptInfo } from './queue-items.js';
import type { SessionHandle, SessionSummary } from './session.js';
import { SessionBuses } from './session-buses.js';
import { SessionLifecycle } from './session-lifecycle.js';
import {
  SessionDirectory,
  type CloseSessionOptions,
  type CreateSessionRequest,
  type RestoreSessionOptions,
} from './session-directory.js';
import type { SessionEvent, SessionEventSink } from './session-events.js';
import { SessionLists, type SessionSummaryPage } from './session-lists.js';
import type { AdmissionLedgerStore, SessionListOptions, SessionStore } from '@sluice/store';
import { WorkspaceRoots } from './workspaces.js';
import { PromptLedger } from './prompt-ledger.js';

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

const unlimitedAsNull = (value: number): number | null => (value === Infinity ? null : value);

/**
 * The sessions layer's one door (SPEC BP-1…BP-10): sessions, each with one FIFO of prompts and
 * branches served one at a time by an `Agent`, a bounded count of pending prompts, prompt
 * deadlines, cancel/remove/close, clients, a bounded history, and each session's event stream.
 * It knows no HTTP. Admission (`sendPrompt`, `branchSession`, `createSession`) is synchronous;
 * every admitted prompt ends with exactly one terminal event, its slot released exactly once.
 */
export class SessionBridge {
  /** Each session's event stream, with replay; closed streams stay replayable briefly. */
  readonly streams: SessionBuses;
  private readonly limitsValue: BridgeLimits;
  private readonly directory: SessionDirectory;
  private readonly admitter: Pick<PromptAdmitter, 'admit'>;
  private readonly brancher: Brancher;
  private readonly lists: SessionLists;
  private readonly wallNow: () => number;
  private readonly lifecycle: SessionLifecycle;
  private drainingNow = false;

  constructor(options: SessionBridgeOptions) {
    const resolved = resolveBridgeOptions(options);
    const { agent, onError, clock, wallClock: wallNow, newId } = resolved;
    this.wallNow = wallNow;
    this.streams = new SessionBuses(
      resolved.eventRingSize,
      (sessionId) => guarded(onError, 'agent.sessionClosed', () => agent.sessionClosed?.(sessionId)),
      resolved.closedStreamRetention,
      { ringBytes: resolved.eventRingBytes, totalBytes: resolved.eventMemoryBytes },
    );
    const events = teeEvents(this.streams, resolved.events);
    const capacity = new SessionCapacity(resolved.maxSessions, resolved.maxSessionsPerWorkspace);
    const persistence = new SessionPersistence(resolved.store, onError);
    const ledger = new PromptLedger(ledgerOf(resolved.store), onError);
    this.directory = new SessionDirectory({
      services: { ...resolved, events, wallNow, agent, ledger },
      capacity,
      persistence,
      workspaces: new WorkspaceRoots(resolved.workspaces),
    });
    const directory = this.directory;
    const openSession = (sessionId: string) => directory.requireOpen(sessionId);
    const admitter = new PromptAdmitter({
      maxPending: resolved.maxPendingPromptsPerSession,
      promptDeadlineMs: resolved.promptDeadlineMs,
      clock,
      wallNow,
      newId,
      openSession,
      isDraining: () => this.drainingNow,
      position: (sessionId) => this.streams.position(sessionId),
      ledger,
    });
    this.admitter = observedAdmitter(admitter, resolved.admissions);
    this.brancher = new Brancher({
      capacity,
      persistence,
      wallNow,
      newId,
      openSession,
      openLive: (params) => directory.openLive(params),
    });
    this.lists = new SessionLists(directory, persistence);
    this.limitsValue = {
      maxPendingPromptsPerSession: unlimitedAsNull(resolved.maxPendingPromptsPerSession),
      maxSessionsPerWorkspace: unlimitedAsNull(resolved.maxSessionsPerWorkspace),
      maxSessions: unlimitedAsNull(resolved.maxSessions),
      promptDeadlineMs: resolved.promptDeadlineMs ?? null,
    };
    agent.attach?.({ publish: (sessionId, event) => this.publish(sessionId, event) });
    const idleTimeoutMs = resolved.sessionIdleTimeoutMs;
    const streams = this.streams;
    this.lifecycle = new SessionLifecycle({ directory, persistence, streams, clock, idleTimeoutMs, onError });
  }

  // ── capabilities and counters ───────────────────────────────────────────────────────

  /** The capability value of BP-9: the limit, or `null` when unlimited. */
  get maxPendingPromptsPerSession(): number | null {
    return this.limitsValue.maxPendingPromptsPerSession;
  }

  /** Everything `/capabilities` → `limits` reports about sessions. */
  get limits(): BridgeLimits {
    return { ...this.limitsValue };
  }

  /** Live sessions, closing ones included. */
  get sessionCount(): number {
    return this.directory.size;
  }

  /** Pending prompts over all sessions. */
  get pendingPromptTotal(): number {
    let total = 0;
    for (const session of this.directory.values()) total += session.runner.pendingPromptCount;
    return total;
  }

  /** Admitted, unsettled prompts of the session: queued plus running (SPEC BP-1). */
  pendingPromptCount(sessionId: string): number {
    return this.directory.require(sessionId).runner.pendingPromptCount;
  }

  /** True once `beginDrain` was called: no new prompt is admitted (`daemon_shutting_down`). */
  get draining(): boolean {
    return this.drainingNow;
  }

  /** Stops admitting prompts; what was admitted runs on. */
  beginDrain(): void {
    this.drainingNow = true;
  }

  // ── sessions ────────────────────────────────────────────────────────────────────────

  /**
   * Opens a session, or attaches to the workspace's default one (`single` scope). Throws
   * `InvalidCwdError`, `WorkspaceMismatchError`, `InvalidSessionScopeError`,
   * `InvalidSessionIdError`, `InvalidClientIdError` or `SessionLimitExceededError`.
   */
  createSession(request: CreateSessionRequest = {}): SessionHandle {
    return this.directory.create(request);
  }

  /**
   * {@link createSession} for callers that may choose the id (`POST /session`): a chosen id that
   * is not live but stored is refused with `SessionIdConflictError` — creating it afresh would
   * replace its stored history on the first save. The caller restores it instead.
   */
  openSession(request: CreateSessionRequest = {}): Promise<SessionHandle> {
    return this.directory.openOrRefuseStored(request);
  }

  /**
   * The error to answer for a session that is not live: when it is stored here, one that says
   * to load it first (issue 19 item 14); else `error` as it is.
   */
  async explainNotFound(error: SessionNotFoundError): Promise<SessionNotFoundError> {
    const id = error.sessionId;
    if (typeof id !== 'string' || !(await this.directory.isStoredNotLive(id))) return error;
    return new SessionNotFoundError(
      id,
      `Session "${id}" is stored but not loaded; load it with POST /session/${id}/load (or /resume) first`,
    );
  }

  /**
   * Brings back a session: attaches to it when live, else loads it from the store (after a
   * restart). Rejects with `SessionNotFoundError` when neither has it; checks `cwd` first.
   */
  restoreSession(sessionId: string, options: RestoreSessionOptions = {}): Promise<SessionHandle> {
    return this.directory.restore(sessionId, options);
  }

  /** Whether the session is live and open (not closing). */
  isOpen(sessionId: string): boolean {
    return this.directory.get(sessionId)?.state === 'open';
  }

  /** Summary of one session (PROTOCOL §4 status). */
  status(sessionId: string): SessionSummary {
    return this.lists.status(sessionId);
  }

  /** Summaries of the open sessions, optionally of one workspace, oldest first. */
  listSessions(workspaceCwd?: string): SessionSummary[] {
    return this.lists.live(workspaceCwd);
  }

  /**
   * One page of the stored and live sessions of the workspace `cwd` lies in (PROTOCOL §4),
   * newest first. Throws `InvalidCwdError`, `WorkspaceMismatchError`,
   * `InvalidSessionCursorError` and, for a size outside [1, 1000], a `RangeError`.
   */
  listWorkspaceSessions(cwd: unknown, options: SessionListOptions = {}): Promise<SessionSummaryPage> {
    return this.lists.page(cwd, options);
  }

  /** A copy of the session's (bounded) conversation history, oldest first. */
  conversation(sessionId: string): ConversationMessage[] {
    return this.directory.requireOpen(sessionId).conversation.snapshot();
  }

  /**
   * Closes the session: every pending prompt ends with `turn_error {code:'session_closed'}`,
   * queued branches reject, then `session_closed` is published. Resolves once the running agent
   * returned; closing a closing session returns the same promise.
   */
  closeSession(sessionId: string, options: CloseSessionOptions = {}): Promise<void> {
    return this.directory.close(sessionId, options);
  }

  /**
   * Closes the session if live (reason `session_purged`), then deletes it and its history from
   * the store; `SessionNotFoundError` when it is neither live nor stored here.
   */
  purgeSession(sessionId: string, clientId?: string): Promise<void> {
    return this.lifecycle.purge(sessionId, clientId);
  }

  /** Closes every session (reason `daemon_shutdown`) and refuses new ones. */
  shutdown(reason = 'daemon_shutdown'): Promise<void> {
    this.lifecycle.stop();
    return this.directory.shutdown(reason);
  }

  // ── event streams ───────────────────────────────────────────────────────────────────

  /** The live session's event stream; `session_not_found` / `session_closing` otherwise. */
  eventStream(sessionId: string): EventBus {
    this.directory.requireOpen(sessionId);
    return this.streams.busFor(sessionId);
  }

  /**
   * The stream to read from: the live session's, or for a session closed moments ago its closed
   * stream, which replays what the client missed and then ends (PROTOCOL §6).
   */
  replayableStream(sessionId: string): EventBus {
    try {
      return this.eventStream(sessionId);
    } catch (error) {
      const closed = this.streams.closedBus(sessionId);
      if (closed === undefined) throw error;
      return closed;
    }
  }

  /**
   * Publishes an event of another part of the daemon (a permission request) on a session's
   * stream; dropped once the session is gone, so a late event opens no stream for it.
   */
  publish(sessionId: string, event: SessionEvent): void {
    if (this.streams.has(sessionId) || this.isOpen(sessionId)) this.streams.publish(sessionId, event);
  }

  // ── clients ─────────────────────────────────────────────────────────────────────────

  /** Registers a client on the session (`clientId`, or a fresh one) — the `resume` path. */
  attachClient(sessionId: string, clientId?: string): SessionHandle {
    if (clientId !== undefined) assertClientIdFormat(clientId);
    return this.directory.requireOpen(sessionId).attach(clientId, true);
  }

  /** Removes a client; throws `InvalidClientIdError` when it is not registered. */
  detachClient(sessionId: string, clientId: string): void {
    assertClientIdFormat(clientId);
    const session = this.directory.requireOpen(sessionId);
    if (!session.clients.remove(clientId)) throw new InvalidClientIdError(clientId, sessionId);
  }

  /** Whether `clientId` is registered on the session. */
  hasClient(sessionId: string, clientId: string): boolean {
    return this.directory.requireOpen(sessionId).clients.has(clientId);
  }

  /** Marks the client as seen now; throws `InvalidClientIdError` for an unregistered one. */
  heartbeat(sessionId: string, clientId?: string): HeartbeatResult {
    const session = this.directory.requireOpen(sessionId);
    session.markActive();
    if (clientId === undefined) return { sessionId, lastSeenAt: this.wallNow() };
    assertClientIdFormat(clientId);
    return { sessionId, clientId, lastSeenAt: session.touchClient(clientId).lastSeenAt };
  }

  // ── prompts ─────────────────────────────────────────────────────────────────────────

  /**
   * Admits a prompt or throws — synchronously, never awaiting before deciding (SPEC BP-6):
   * `InvalidPromptError`, `InvalidDeadlineError`, `InvalidClientIdError`, `SessionNotFoundError`,
   * `SessionClosingError`, `DaemonDrainingError`, `PromptAbortedError`, `PromptQueueFullError`.
   * The answer says where the prompt's events begin on the session's stream.
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

  /** {@link sendPrompt}, but a full queue is returned, not thrown: the HTTP route under overload (BP-8). */
  trySendPrompt(
    sessionId: string,
    prompt: readonly ContentBlock[],
    options: SendPromptOptions = {},
  ): PromptAdmission | PromptQueueFullError {
    return this.admitter.admit(sessionId, prompt, options);
  }

  /** The session's pending prompts, the running one first, then the queue in FIFO order. */
  pendingPrompts(sessionId: string): PendingPromptInfo[] {
    return this.directory.requireOpen(sessionId).runner.pendingPrompts();
  }

  /**
   * Aborts the running prompt only; it ends `turn_complete {stopReason:'cancelled'}` once the
   * agent returns. Publishes `prompt_cancelled`. Returns false when no prompt was running.
   */
  cancel(sessionId: string): boolean {
    return this.directory.requireOpen(sessionId).runner.cancelRunning();
  }

  /**
   * Removes a queued prompt in O(1) (`turn_complete {stopReason:'cancelled'}` +
   * `pending_prompt_completed {state:'removed'}`) or cancels the running one. Returns false
   * when the prompt is unknown or already ending.
   */
  removePendingPrompt(sessionId: string, promptId: string): boolean {
    return this.directory.requireOpen(sessionId).runner.remove(promptId);
  }

  /**
   * Forks the session into a new `thread` session with a copy of the conversation. Admission is
   * synchronous (`BranchWhilePromptActiveError`, `SessionLimitExceededError`); the branch then
   * waits in the same FIFO as prompts and consumes no prompt slot (SPEC BP-3).
   */
  branchSession(sessionId: string, options: BranchSessionOptions = {}): Promise<BranchedSession> {
    return this.brancher.branch(sessionId, options);
  }
}

/** The session streams, then the observer when there is one. */
function teeEvents(streams: SessionBuses, observer: SessionEventSink | undefined): SessionEventSink {
  if (observer === undefined) return streams;
  return {
    publish(sessionId, event) {
      streams.publish(sessionId, event);
      observer.publish(sessionId, event);
    },
  };
}

function guarded(
  onError: (error: unknown, context: string) => void,
  context: string,
  work: () => void,
): void {
  try {
    work();
  } catch (error) {
    onError(error, context);
  }
}

/** The store's admission ledger, when it keeps one. */
function ledgerOf(store: SessionStore | undefined): AdmissionLedgerStore | undefined {
  if (store?.recordAdmissions === undefined || store.takeUnsettled === undefined) return undefined;
  return {
    recordAdmissions: store.recordAdmissions.bind(store),
    takeUnsettled: store.takeUnsettled.bind(store),
  };
}
