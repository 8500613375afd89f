import { ModelNotFoundError } from '@sluice/runtime';
import { assertClientIdFormat } from './clients.js';
import { isConversationMessage } from './conversation.js';
import {
  BridgeShuttingDownError,
  InvalidSessionIdError,
  InvalidSessionScopeError,
  SessionClosingError,
  SessionIdConflictError,
  SessionNotFoundError,
  SessionOwnedElsewhereError,
  SessionWorkspaceConflictError,
  UnknownAgentError,
  WorkspaceMismatchError,
} from './errors.js';
import type { SessionCapacity } from './capacity.js';
import type { SessionPersistence } from './persistence.js';
import { DAEMON_RESTARTED } from './prompt-ledger.js';
import { SESSION_EVENT } from './session-events.js';
import { Session, type SessionHandle, type SessionParams, type SessionServices } from './session.js';
import type { AcceptedPrompt, SessionRecord, SessionScope } from '@sluice/store';
import type { ResolvedCwd, WorkspaceRoots } from './workspaces.js';

/** `POST /session` in bridge terms. */
export interface CreateSessionRequest {
  /** Absolute working directory; defaults to the first served workspace. */
  cwd?: string;
  /** Default `single`. */
  scope?: SessionScope;
  /**
   * A caller-chosen UUID: creates a thread session with that id (or attaches to it when live).
   * Use `openSession` for it: `createSession` does not read the store, so a stored session of
   * that id would be replaced.
   */
  sessionId?: string;
  /** The caller's `X-Qwen-Client-Id`; a fresh id is minted when absent. */
  clientId?: string;
  /** The agent to run the session on, by name (`Agent.openSession`); the default when absent. */
  agent?: string;
  /**
   * The catalogue model the session's agent calls, by name or alias; the default when absent.
   * Unknown: `ModelNotFoundError`. Joining a live `single` session keeps that session's model.
   */
  model?: string;
}

/** Options of `restoreSession`. */
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

/** Options of `closeSession`. */
export interface CloseSessionOptions {
  /** Carried by `session_closed`; default `client_close`. */
  reason?: string;
  clientId?: string;
}

/** What a directory is built from. */
export interface DirectoryParts {
  services: Omit<SessionServices, 'save' | 'closed'>;
  capacity: SessionCapacity;
  persistence: SessionPersistence;
  workspaces: WorkspaceRoots;
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The live sessions by id, and each workspace's default (`single`) session: opens them (new,
 * or restored from the store), attaches clients, closes them and forgets them once closed.
 */
export class SessionDirectory {
  private readonly sessions = new Map<string, Session>();
  private readonly defaults = new Map<string, string>();
  private readonly services: SessionServices;
  private readonly capacity: SessionCapacity;
  private readonly persistence: SessionPersistence;
  private readonly workspaces: WorkspaceRoots;
  private accepting = true;

  constructor(parts: DirectoryParts) {
    this.capacity = parts.capacity;
    this.persistence = parts.persistence;
    this.workspaces = parts.workspaces;
    this.services = {
      ...parts.services,
      save: (session) => this.persistence.save(session),
      closed: (session) => this.forget(session),
    };
  }

  /** Live sessions, closing ones included. */
  get size(): number {
    return this.sessions.size;
  }

  /** The live sessions, closing ones included, oldest first. */
  values(): IterableIterator<Session> {
    return this.sessions.values();
  }

  /** The live session, closing ones included, if any. */
  get(sessionId: string): Session | undefined {
    return this.sessions.get(sessionId);
  }

  /** The live session, or `SessionNotFoundError`. */
  require(sessionId: string): Session {
    const session = this.sessions.get(sessionId);
    if (session === undefined) throw new SessionNotFoundError(sessionId);
    return session;
  }

  /** The live, open session, or `SessionNotFoundError` / `SessionClosingError`. */
  requireOpen(sessionId: string): Session {
    const session = this.require(sessionId);
    if (session.state !== 'open') throw new SessionClosingError(sessionId);
    return session;
  }

  /** The cwd and served workspace of a request (`InvalidCwdError`, `WorkspaceMismatchError`). */
  resolveWorkspace(cwd: unknown): ResolvedCwd {
    return this.workspaces.resolve(cwd);
  }

  /**
   * Opens a session, or attaches to the workspace's default one (`single` scope). `newId` is the
   * id a new session gets when the request chose none (one the agent already prepared).
   */
  create(request: CreateSessionRequest, newId?: string): SessionHandle {
    const { scope, cwd, workspaceCwd, model } = this.checkCreate(request);
    const existing = this.attachable(request, scope, cwd, workspaceCwd);
    if (existing !== undefined) return existing.attach(request.clientId, true);
    const now = this.services.wallNow();
    const session = this.openLive({
      sessionId: request.sessionId ?? newId ?? this.services.newId(),
      workspaceCwd,
      cwd,
      scope: request.sessionId === undefined ? scope : 'thread',
      createdAt: now,
      updatedAt: now,
      ...(model === undefined ? {} : { model }),
      conversation: [],
    });
    void this.persistence.save(session);
    if (session.scope === 'single') this.defaults.set(workspaceCwd, session.sessionId);
    return session.attach(request.clientId, false);
  }

  /** `create` for a chosen id that may be stored: refused with `SessionIdConflictError` then. */
  async openOrRefuseStored(request: CreateSessionRequest): Promise<SessionHandle> {
    const sessionId = request.sessionId;
    if (sessionId === undefined || this.persistence.store === undefined || this.sessions.has(sessionId))
      return this.createPrepared(request);
    this.checkCreate(request);
    const record = await this.persistence.load(sessionId);
    // Live by now (a restore or a create of this id won the race): attach as create does.
    if (record !== undefined && !this.sessions.has(sessionId)) {
      if (!this.workspaces.serves(record.workspaceCwd)) throw new SessionNotFoundError(sessionId);
      throw new SessionIdConflictError(sessionId, record.workspaceCwd);
    }
    return this.createPrepared(request);
  }

  /**
   * `create`, with the agent's `openSession` awaited before a new session becomes live, so that
   * an agent that cannot run it refuses the create and nothing of the session is kept or saved.
   */
  async createPrepared(request: CreateSessionRequest): Promise<SessionHandle> {
    const agent = this.services.agent;
    if (agent.openSession === undefined) {
      if (request.agent !== undefined) throw new UnknownAgentError(request.agent, []);
      return this.create(request);
    }
    const { scope, cwd, workspaceCwd, model } = this.checkCreate(request);
    const existing = this.attachable(request, scope, cwd, workspaceCwd);
    if (existing !== undefined) return existing.attach(request.clientId, true);
    this.capacity.assertRoom(workspaceCwd);
    const sessionId = request.sessionId ?? this.services.newId();
    await agent.openSession({
      sessionId,
      cwd,
      workspaceCwd,
      ...(request.agent === undefined ? {} : { agent: request.agent }),
      ...(model === undefined ? {} : { model }),
    });
    let handle: SessionHandle | undefined;
    try {
      handle = this.create(request, sessionId);
      return handle;
    } finally {
      // Refused meanwhile (capacity, shutdown) or attached to a session opened meanwhile.
      if (handle?.sessionId !== sessionId) agent.sessionClosed?.(sessionId);
    }
  }

  /**
   * Whether a session that is not live is stored (in a workspace served here): a request for it
   * then says to load it first. Sessions of other workspaces stay unknown (issue 19 item 6).
   */
  async isStoredNotLive(sessionId: string): Promise<boolean> {
    if (this.sessions.has(sessionId) || this.persistence.store === undefined) return false;
    const record = await this.persistence.load(sessionId);
    return record !== undefined && this.workspaces.serves(record.workspaceCwd);
  }

  /** Attaches to a live session, else loads it from the store (`SessionNotFoundError` when neither has it). */
  async restore(id: string, options: RestoreSessionOptions): Promise<SessionHandle> {
    // Ids are stored in lower case, as create records a caller-chosen one.
    const sessionId = UUID_PATTERN.test(id) ? id.toLowerCase() : id;
    if (options.clientId !== undefined) assertClientIdFormat(options.clientId);
    const expected =
      options.cwd === undefined ? undefined : this.workspaces.resolve(options.cwd).workspaceCwd;
    const live = this.sessions.get(sessionId);
    if (live !== undefined) return this.attachRestored(live, expected, options.clientId);
    if (!this.accepting) throw new BridgeShuttingDownError();
    const record = await this.persistence.load(sessionId);
    // A concurrent restore (or a create with this id) may have opened it meanwhile.
    const opened = this.sessions.get(sessionId);
    if (opened !== undefined) return this.attachRestored(opened, expected, options.clientId);
    // A session of a workspace this daemon does not serve is not found: saying more would tell
    // a client that it exists, and where.
    if (record === undefined || !this.workspaces.serves(record.workspaceCwd))
      throw new SessionNotFoundError(sessionId);
    if (expected !== undefined && record.workspaceCwd !== expected) throw new SessionNotFoundError(sessionId);
    // In a fleet, one daemon at a time runs a session: take it, or say which daemon has it.
    const claimed = await this.persistence.claim(sessionId, record);
    if ('owner' in claimed) throw new SessionOwnedElsewhereError(sessionId, claimed.owner);
    const raced = this.sessions.get(sessionId);
    if (raced !== undefined) return this.attachRestored(raced, expected, options.clientId);
    if (claimed.record === undefined) throw new SessionNotFoundError(sessionId);
    if (!this.accepting) throw new BridgeShuttingDownError();
    const session = this.openRestored(claimed.record, options.mode ?? 'resume');
    await this.endInterruptedPrompts(session);
    return session.attach(options.clientId, false);
  }

  /**
   * Ends each prompt a killed daemon accepted in this session and never ended with one
   * `turn_error {code:"daemon_restarted"}` — published before the load answers, so a client
   * that replays the new stream sees it — and never runs it again (issue 19 item 8).
   */
  private async endInterruptedPrompts(session: Session): Promise<void> {
    let interrupted: AcceptedPrompt[];
    try {
      interrupted = await this.services.ledger.takeUnsettled(session.sessionId);
    } catch (error) {
      return this.services.onError(error, `store.takeUnsettled ${session.sessionId}`);
    }
    for (const { promptId } of interrupted)
      session.publish({
        type: SESSION_EVENT.turnError,
        promptId,
        data: {
          sessionId: session.sessionId,
          promptId,
          code: DAEMON_RESTARTED,
          message: 'The daemon restarted before this prompt ended; it was not run again. Send it again.',
          retryable: true,
        },
      });
  }

  /** Opens a live session (capacity checked), without saving it. */
  openLive(params: SessionParams): Session {
    this.capacity.assertRoom(params.workspaceCwd);
    const session = new Session(params, this.services);
    this.sessions.set(session.sessionId, session);
    this.capacity.count(session.workspaceCwd, 1);
    return session;
  }

  /** Starts closing a session; closing a closing one returns the same promise. */
  close(sessionId: string, options: CloseSessionOptions): Promise<void> {
    const session = this.require(sessionId);
    if (session.state === 'open')
      this.beginClose(session, options.reason ?? 'client_close', options.clientId);
    return session.closed;
  }

  /** Closes every session with `reason` and refuses new ones. */
  async shutdown(reason: string): Promise<void> {
    this.accepting = false;
    const closing: Promise<void>[] = [];
    for (const session of [...this.sessions.values()]) {
      if (session.state === 'open') this.beginClose(session, reason, undefined);
      closing.push(session.closed);
    }
    await Promise.all(closing);
  }

  /** The live session a create attaches to: its chosen id, or the workspace's default. */
  private attachable(
    request: CreateSessionRequest,
    scope: SessionScope,
    cwd: string,
    workspaceCwd: string,
  ): Session | undefined {
    if (request.sessionId !== undefined) {
      const existing = this.sessions.get(request.sessionId);
      if (existing === undefined) return undefined;
      if (existing.state !== 'open') throw new SessionClosingError(existing.sessionId);
      if (existing.workspaceCwd !== workspaceCwd)
        throw new WorkspaceMismatchError(cwd, [existing.workspaceCwd]);
      return existing;
    }
    if (scope !== 'single') return undefined;
    const defaultId = this.defaults.get(workspaceCwd);
    const existing = defaultId === undefined ? undefined : this.sessions.get(defaultId);
    return existing?.state === 'open' ? existing : undefined;
  }

  /** Checks a create request before anything is read or opened; its scope and workspace. */
  private checkCreate(
    request: CreateSessionRequest,
  ): ResolvedCwd & { scope: SessionScope; model: string | undefined } {
    if (!this.accepting) throw new BridgeShuttingDownError();
    const scope = request.scope ?? 'single';
    if (scope !== 'single' && scope !== 'thread') throw new InvalidSessionScopeError(scope);
    const { cwd, workspaceCwd } = this.workspaces.resolve(request.cwd);
    if (request.clientId !== undefined) assertClientIdFormat(request.clientId);
    const sessionId = request.sessionId;
    if (sessionId !== undefined && (typeof sessionId !== 'string' || !UUID_PATTERN.test(sessionId)))
      throw new InvalidSessionIdError(sessionId);
    return { scope, cwd, workspaceCwd, model: this.modelOf(request.model) };
  }

  /** The catalogue name of the model a create names (the default when none); `undefined` without a catalogue. */
  private modelOf(name: string | undefined): string | undefined {
    const models = this.services.models;
    if (models === undefined) {
      if (name !== undefined) throw new ModelNotFoundError(name, []);
      return undefined;
    }
    return models.resolve(name);
  }

  /** A restore found the session live: attach, unless it is closing or lives elsewhere. */
  private attachRestored(
    session: Session,
    expectedWorkspace: string | undefined,
    clientId: string | undefined,
  ): SessionHandle {
    if (session.state !== 'open') throw new SessionClosingError(session.sessionId);
    if (expectedWorkspace !== undefined && session.workspaceCwd !== expectedWorkspace)
      throw new SessionWorkspaceConflictError(session.sessionId, expectedWorkspace, session.workspaceCwd);
    return session.attach(clientId, true);
  }

  /** Opens a stored session; `load` also replays its history as `session_update` events. */
  private openRestored(record: SessionRecord, mode: 'load' | 'resume'): Session {
    const session = this.openLive({
      ...record,
      conversation: record.conversation.filter(isConversationMessage),
    });
    if (session.scope === 'single' && !this.defaults.has(session.workspaceCwd))
      this.defaults.set(session.workspaceCwd, session.sessionId);
    if (mode === 'load') session.replayHistory();
    return session;
  }

  private beginClose(session: Session, reason: string, clientId: string | undefined): void {
    if (this.defaults.get(session.workspaceCwd) === session.sessionId)
      this.defaults.delete(session.workspaceCwd);
    session.beginClose(reason, clientId);
  }

  private forget(session: Session): void {
    this.sessions.delete(session.sessionId);
    this.capacity.count(session.workspaceCwd, -1);
    this.persistence.release(session, () => !this.sessions.has(session.sessionId));
  }
}
