import {
  PERMISSION_NOT_FOUND_CODE,
  type BranchedSessionHandle,
  type Capabilities,
  type HeartbeatResponse,
  type ModelSchedulerSnapshot,
  type PendingPromptsResponse,
  type PermissionVote,
  type PromptAccepted,
  type PromptResult,
  type RemovePendingPromptResponse,
  type RestoredSessionHandle,
  type SessionHandle,
  type SessionListPage,
  type SessionSummary,
} from '@sluice/protocol';
import { DEFAULT_FETCH_TIMEOUT_MS, DEFAULT_RECONNECT, PROMPT_POST_RETRIES } from './defaults.js';
import {
  reconnectSettings,
  subscribeEvents,
  type DaemonEvent,
  type ReconnectOptions,
  type ReconnectSettings,
  type SubscribeOptions,
} from './events.js';
import { HttpCore, discard, errorFrom, pendingPromptPath, sessionPath, type FetchLike } from './http.js';
import { postPrompt, type Admission, type PromptRequest } from './prompt-post.js';
import { PromptTurns } from './prompt-turns.js';
import {
  createSessionBody,
  restoreSessionBody,
  sessionPageQuery,
  type BranchSessionRequest,
  type CreateSessionRequest,
  type RestoreSessionRequest,
} from './requests.js';
import { PromptReservations } from './reservations.js';
import {
  baseUrl,
  nonNegativeInteger,
  normalizePendingPromptLimit,
  optionalFunction,
  optionalNonEmptyString,
  optionalTimeoutMs,
  optionsObject,
} from './validate.js';

/** Options of {@link DaemonClient}. */
export interface DaemonClientOptions {
  /** The daemon's base URL, e.g. `http://127.0.0.1:4170`; trailing slashes are dropped. */
  baseUrl: string;
  /** Bearer token (`--token` / `SLUICE_TOKEN` of the daemon). */
  token?: string;
  /** The `fetch` to use; default `globalThis.fetch`. */
  fetch?: FetchLike;
  /**
   * Timeout of short requests and of opening an event stream, in ms (default 30 000; `0` or
   * `Infinity` disable). Never applied to a prompt's turn or to a stream once open.
   */
  fetchTimeoutMs?: number;
  /**
   * Local limit of outstanding `prompt()` calls per session (BP-11 … BP-13). Pass
   * `capabilities.limits.maxPendingPromptsPerSession` straight in; default 5; `null`, `0`
   * and `Infinity` disable it. The daemon still enforces its own limit (BP-4).
   */
  maxPendingPromptsPerSession?: number | null;
  /** How event streams re-open after a drop; `false` disables. */
  reconnect?: ReconnectOptions | boolean;
  /**
   * Times a prompt is sent again, with the same `Idempotency-Key`, when the connection failed
   * before its answer was read; the daemon admits it once whatever the count. Default 2; `0`
   * surfaces the connection's error at once.
   */
  promptRetries?: number;
}

/**
 * Client of one Sluice (or `qwen serve`) daemon over REST + SSE, a drop-in for the reference
 * `DaemonClient`: same method names and parameter positions. Uses only `fetch` and an SSE
 * parser, so it runs in browsers too. `prompt()` keeps a local per-session reservation
 * (BP-11) so a full session fails fast without a request.
 */
export class DaemonClient {
  readonly baseUrl: string;
  private readonly core: HttpCore;
  private readonly fetchTimeoutMs: number;
  private readonly reconnect: ReconnectSettings;
  private readonly promptLimit: number;
  private readonly reservations = new PromptReservations();
  private readonly turns: PromptTurns;

  constructor(options: DaemonClientOptions) {
    optionsObject('DaemonClient', options);
    this.baseUrl = baseUrl(options.baseUrl);
    const token = optionalNonEmptyString('token', options.token);
    const fetch = optionalFunction('fetch', options.fetch);
    this.fetchTimeoutMs = optionalTimeoutMs(
      'fetchTimeoutMs',
      options.fetchTimeoutMs,
      DEFAULT_FETCH_TIMEOUT_MS,
    );
    this.promptLimit = normalizePendingPromptLimit(options.maxPendingPromptsPerSession);
    this.reconnect = reconnectSettings(options.reconnect, DEFAULT_RECONNECT);
    const fetchFn = fetch ?? ((input: string, init?: RequestInit) => globalThis.fetch(input, init));
    const promptRetries = nonNegativeInteger('promptRetries', options.promptRetries ?? PROMPT_POST_RETRIES);
    this.core = new HttpCore(this.baseUrl, token, fetchFn, this.fetchTimeoutMs, promptRetries);
    this.turns = new PromptTurns(this.core, this.fetchTimeoutMs, (sessionId, subscribe) =>
      this.subscribeEvents(sessionId, subscribe),
    );
  }

  /** The local per-session limit in force (`Infinity` when disabled). */
  get maxPendingPromptsPerSession(): number {
    return this.promptLimit;
  }

  /** How many `prompt()` calls of this client currently hold a slot of `sessionId`. */
  pendingPromptCount(sessionId: string): number {
    return this.reservations.count(sessionId);
  }

  /**
   * Reserves a local slot for a prompt of `sessionId` (throws
   * {@link DaemonPendingPromptLimitError} when full); call the result exactly when it ends.
   * For callers that drive `promptNonBlocking` themselves.
   */
  reservePromptSlot(sessionId: string, limit: number | null = this.promptLimit): () => void {
    return this.reservations.reserve(sessionId, normalizePendingPromptLimit(limit));
  }

  /** `GET /health`. */
  health(): Promise<{ status: string }> {
    return this.core.json('GET', '/health');
  }

  /** `GET /capabilities`: features, workspace and limits (§3). */
  capabilities(): Promise<Capabilities> {
    return this.core.json('GET', '/capabilities');
  }

  /** `GET /runtime/snapshot`: the model scheduler's live state, never prompt text (SCH-11). */
  runtimeSnapshot(): Promise<ModelSchedulerSnapshot> {
    return this.core.json('GET', '/runtime/snapshot');
  }

  /** `POST /session`: creates a session, or attaches to the workspace's default one (§4). */
  createOrAttachSession(request: CreateSessionRequest = {}, clientId?: string): Promise<SessionHandle> {
    return this.core.json('POST', '/session', { body: createSessionBody(request), clientId });
  }

  /** `GET /session/:id/status`. */
  sessionStatus(sessionId: string, clientId?: string): Promise<SessionSummary> {
    return this.core.json('GET', sessionPath(sessionId, '/status'), { clientId });
  }

  /** One page of `GET /workspace/:cwd/sessions`. */
  listWorkspaceSessionsPage(
    workspaceCwd: string,
    options: { pageSize?: number; cursor?: string } = {},
  ): Promise<SessionListPage> {
    const query = sessionPageQuery(options);
    return this.core.json('GET', `/workspace/${encodeURIComponent(workspaceCwd)}/sessions${query}`);
  }

  /** Every live session of a workspace, following `nextCursor` (the daemon caps sessions). */
  async listWorkspaceSessions(
    workspaceCwd: string,
    options: { pageSize?: number } = {},
  ): Promise<SessionSummary[]> {
    const sessions: SessionSummary[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.listWorkspaceSessionsPage(workspaceCwd, {
        ...options,
        ...(cursor === undefined ? {} : { cursor }),
      });
      sessions.push(...page.sessions);
      if (page.nextCursor === cursor) break;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return sessions;
  }

  /** `POST /session/:id/load`: restores a persisted session (§4). */
  loadSession(
    sessionId: string,
    request: RestoreSessionRequest = {},
    clientId?: string,
  ): Promise<RestoredSessionHandle> {
    return this.restore('load', sessionId, request, clientId);
  }

  /** `POST /session/:id/resume`: restores a session and registers a fresh client id (§4). */
  resumeSession(
    sessionId: string,
    request: RestoreSessionRequest = {},
    clientId?: string,
  ): Promise<RestoredSessionHandle> {
    return this.restore('resume', sessionId, request, clientId);
  }

  private restore(
    mode: 'load' | 'resume',
    sessionId: string,
    request: RestoreSessionRequest,
    clientId?: string,
  ) {
    return this.core.json<RestoredSessionHandle>('POST', sessionPath(sessionId, `/${mode}`), {
      body: restoreSessionBody(request),
      clientId,
    });
  }

  /** `POST /session/:id/branch`: a new session with a copy of the conversation (§7, BP-3). */
  branchSession(
    sessionId: string,
    request: BranchSessionRequest = {},
    clientId?: string,
  ): Promise<BranchedSessionHandle> {
    return this.core.json('POST', sessionPath(sessionId, '/branch'), { body: request, clientId });
  }

  /** `DELETE /session/:id`; a session that is already gone (404) counts as closed. */
  async closeSession(sessionId: string, clientId?: string): Promise<void> {
    await this.core.empty('DELETE', sessionPath(sessionId), { clientId }, [404]);
  }

  /** `POST /session/:id/detach`: unregisters `clientId` from the session. */
  async detachSession(sessionId: string, clientId?: string): Promise<void> {
    await this.core.empty('POST', sessionPath(sessionId, '/detach'), { body: {}, clientId });
  }

  /** `POST /session/:id/heartbeat`. */
  heartbeat(sessionId: string, clientId?: string): Promise<HeartbeatResponse> {
    return this.core.json('POST', sessionPath(sessionId, '/heartbeat'), { body: {}, clientId });
  }

  /** `POST /session/:id/cancel`: aborts the running prompt only (§5). */
  async cancel(sessionId: string, clientId?: string): Promise<void> {
    await this.core.empty('POST', sessionPath(sessionId, '/cancel'), { body: {}, clientId });
  }

  /** `GET /session/:id/pending-prompts`: the running prompt first, then the queued ones. */
  pendingPrompts(sessionId: string, clientId?: string): Promise<PendingPromptsResponse> {
    return this.core.json('GET', sessionPath(sessionId, '/pending-prompts'), { clientId });
  }

  /** {@link pendingPrompts} under the reference client's name and options shape. */
  getPendingPrompts(sessionId: string, options: { clientId?: string } = {}): Promise<PendingPromptsResponse> {
    return this.pendingPrompts(sessionId, options.clientId);
  }

  /** `DELETE /session/:id/pending-prompts/:promptId`: removes a queued prompt or aborts the running one. */
  removePendingPrompt(
    sessionId: string,
    promptId: string,
    options: { clientId?: string } = {},
  ): Promise<RemovePendingPromptResponse> {
    return this.core.json('DELETE', pendingPromptPath(sessionId, promptId), { clientId: options.clientId });
  }

  /**
   * `POST /permission/:requestId`: casts a vote (§7). `true` when it counted, `false` when the
   * daemon answers `404 permission_request_not_found` (unknown, or another client was first); any
   * other failure — a daemon without the route included — is a {@link DaemonHttpError}.
   */
  respondToPermission(requestId: string, response: PermissionVote, clientId?: string): Promise<boolean> {
    return this.vote(`/permission/${encodeURIComponent(requestId)}`, response, clientId);
  }

  /** `POST /session/:id/permission/:requestId`: {@link respondToPermission} scoped to a session. */
  respondToSessionPermission(
    sessionId: string,
    requestId: string,
    response: PermissionVote,
    clientId?: string,
  ): Promise<boolean> {
    return this.vote(
      sessionPath(sessionId, `/permission/${encodeURIComponent(requestId)}`),
      response,
      clientId,
    );
  }

  private async vote(path: string, response: PermissionVote, clientId?: string): Promise<boolean> {
    const answer = await this.core.send('POST', path, { body: response, clientId });
    if (answer.ok) {
      await discard(answer);
      return true;
    }
    const error = await errorFrom(answer, `POST ${path}`);
    if (error.status === 404 && error.code === PERMISSION_NOT_FOUND_CODE) return false;
    throw error;
  }

  /**
   * Sends a prompt and resolves when its turn ends: directly on a blocking `200`, otherwise
   * from the event stream replayed from the `202`'s `lastEventId`. Rejects with
   * {@link DaemonPendingPromptLimitError} when the session is full (locally: nothing sent),
   * a `DaemonTurnError` for `turn_error`, the abort reason when `signal` aborts (the prompt is
   * then also removed or cancelled on the daemon). The local slot is released exactly once.
   */
  prompt(
    sessionId: string,
    request: PromptRequest,
    signal?: AbortSignal,
    clientId?: string,
  ): Promise<PromptResult> {
    return this.runPrompt(sessionId, request, signal, clientId, this.promptLimit);
  }

  /** @internal {@link prompt} with another local limit (used by `DaemonSessionClient`). */
  async runPrompt(
    sessionId: string,
    request: PromptRequest,
    signal: AbortSignal | undefined,
    clientId: string | undefined,
    limit: number,
  ): Promise<PromptResult> {
    signal?.throwIfAborted();
    const release = this.reservations.reserve(sessionId, limit);
    try {
      const admission = await this.admitPrompt(sessionId, request, signal, clientId);
      if ('result' in admission) return admission.result;
      return await this.awaitTurn(sessionId, admission.accepted, signal, clientId);
    } finally {
      release();
    }
  }

  /**
   * Sends a prompt and returns the `202` envelope `{promptId, lastEventId, eventEpoch}` (or a
   * blocking daemon's result) without waiting for the turn. No local reservation: pair it with
   * {@link reservePromptSlot} when you want one.
   */
  async promptNonBlocking(
    sessionId: string,
    request: PromptRequest,
    signal?: AbortSignal,
    clientId?: string,
  ): Promise<PromptAccepted | PromptResult> {
    const admission = await postPrompt(this.core, sessionId, request, clientId, signal);
    return 'accepted' in admission ? admission.accepted : admission.result;
  }

  /** The session's events as an async iterator with resume and reconnect (§6). */
  subscribeEvents(sessionId: string, options: SubscribeOptions = {}): AsyncGenerator<DaemonEvent> {
    return subscribeEvents(this.core, this.fetchTimeoutMs, this.reconnect, sessionId, options);
  }

  /**
   * Waits on the event stream, replayed from the `202`'s cursor, for the prompt's terminal
   * event. A caller abort also takes the prompt back on the daemon.
   * @internal
   */
  awaitTurn(
    sessionId: string,
    accepted: PromptAccepted,
    signal: AbortSignal | undefined,
    clientId: string | undefined,
  ): Promise<PromptResult> {
    return this.turns.awaitTurn(sessionId, accepted, signal, clientId);
  }

  /**
   * Best effort: removes (queued) or aborts (running) an abandoned prompt on the daemon.
   * @internal
   */
  takeBackPrompt(sessionId: string, promptId: string, clientId: string | undefined): Promise<void> {
    return this.turns.takeBack(sessionId, promptId, clientId);
  }

  /**
   * Posts the prompt. A caller abort rejects at once, but the POST itself is not cut: if the
   * daemon admitted the prompt meanwhile, the `202`'s prompt is taken back, so an abort never
   * leaves an orphan turn running on the daemon.
   * @internal
   */
  admitPrompt(
    sessionId: string,
    request: PromptRequest,
    signal: AbortSignal | undefined,
    clientId: string | undefined,
  ): Promise<Admission> {
    return this.turns.admit(sessionId, request, signal, clientId);
  }
}
