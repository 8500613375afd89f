import type * as P from '@sluice/protocol';
import type { DaemonClient } from './daemon-client.js';
import { DaemonHttpError } from './errors.js';
import type { DaemonEvent, SubscribeOptions } from './events.js';
import type { PromptRequest } from './prompt-post.js';
import { PromptWaiters } from './prompt-waiters.js';
import type { BranchSessionRequest, CreateSessionRequest, RestoreSessionRequest } from './requests.js';
import { EpochResetWatch, settleTerminal } from './turn.js';
import { eventCursor, normalizePendingPromptLimit, sessionClientOptions } from './validate.js';

/** Options of the {@link DaemonSessionClient} constructor. */
export interface DaemonSessionClientOptions {
  client: DaemonClient;
  session: P.SessionHandle;
  /** Resume cursor for the first `events()` call; omitted = live only. */
  lastEventId?: number;
  /** Epoch of the bus that produced `lastEventId`. */
  eventEpoch?: string;
  /** True when the session had a prompt in flight when this client attached. */
  hasActivePrompt?: boolean;
  /**
   * Local per-session prompt limit of this session client (BP-14); default: the parent
   * client's. The counter itself is the parent's, shared by every session client of it.
   */
  maxPendingPromptsPerSession?: number | null;
}

/** Third/fourth argument of the static factories: the reference's `clientId`, or options. */
export type SessionClientFactoryOptions =
  string | { clientId?: string; maxPendingPromptsPerSession?: number | null };

/** Options of {@link DaemonSessionClient.events}. */
export interface DaemonSessionSubscribeOptions extends Omit<SubscribeOptions, 'clientId'> {
  /** Continue from this client's last seen event id when `lastEventId` is not given (default true). */
  resume?: boolean;
}

function factoryOptions(options: SessionClientFactoryOptions | undefined): {
  clientId?: string;
  maxPendingPromptsPerSession?: number | null;
} {
  if (options === undefined) return {};
  return typeof options === 'string' ? { clientId: options } : options;
}

/** The optional arguments of {@link DaemonSessionClient.load} and `resume`. */
export type RestoreArgs = [request?: RestoreSessionRequest, options?: SessionClientFactoryOptions];

/**
 * Loads (`events()` replays the daemon's ring from the start) or resumes (`events()` starts at
 * the returned watermark) a session and binds a client to it.
 */
async function restore(
  client: DaemonClient,
  sessionId: string,
  [request = {}, options]: RestoreArgs,
  how: 'load' | 'resume',
): Promise<DaemonSessionClient> {
  const { clientId, maxPendingPromptsPerSession } = factoryOptions(options);
  const session =
    how === 'load'
      ? await client.loadSession(sessionId, request, clientId)
      : await client.resumeSession(sessionId, request, clientId);
  return new DaemonSessionClient({
    client,
    session,
    lastEventId: how === 'load' ? 0 : (session.lastEventId ?? 0),
    ...(session.eventEpoch === undefined ? {} : { eventEpoch: session.eventEpoch }),
    ...(maxPendingPromptsPerSession === undefined ? {} : { maxPendingPromptsPerSession }),
  });
}

/**
 * One daemon session bound to a {@link DaemonClient}: the session's routes without the
 * `sessionId` argument, and a long-lived `events()` subscription that also completes this
 * client's prompts (one connection instead of one per prompt). The local pending-prompt
 * limit applies on both prompt paths (BP-14); terminal events that arrive before a prompt's
 * `202` has been read are kept for it, never lost.
 */
export class DaemonSessionClient {
  readonly client: DaemonClient;
  /** The session handle; its `clientId` is replaced when the daemon forgot this client. */
  session: P.SessionHandle;
  readonly hasActivePrompt: boolean;
  private readonly limit: number;
  private lastSeenEventId: number | undefined;
  private lastSeenEpoch: string | undefined;
  private openStreams = 0;
  private postsInFlight = 0;
  private readonly waiters: PromptWaiters;
  private reattaching: Promise<void> | undefined;

  constructor(options: DaemonSessionClientOptions) {
    sessionClientOptions(options);
    this.client = options.client;
    this.session = options.session;
    this.hasActivePrompt = options.hasActivePrompt ?? false;
    this.limit =
      options.maxPendingPromptsPerSession === undefined
        ? options.client.maxPendingPromptsPerSession
        : normalizePendingPromptLimit(options.maxPendingPromptsPerSession);
    this.lastSeenEventId = eventCursor('lastEventId', options.lastEventId);
    this.lastSeenEpoch = options.eventEpoch ?? options.session.eventEpoch;
    this.waiters = new PromptWaiters(options.session.sessionId);
  }

  /** Creates a session or attaches to the workspace's default one (reference positions). */
  static async createOrAttach(
    client: DaemonClient,
    request: CreateSessionRequest = {},
    options?: SessionClientFactoryOptions,
  ): Promise<DaemonSessionClient> {
    const { clientId, maxPendingPromptsPerSession } = factoryOptions(options);
    const session = await client.createOrAttachSession(request, clientId);
    return new DaemonSessionClient({
      client,
      session,
      ...(maxPendingPromptsPerSession === undefined ? {} : { maxPendingPromptsPerSession }),
    });
  }

  /** Loads a persisted session; the first `events()` replays the daemon's ring from the start. */
  static load(client: DaemonClient, sessionId: string, ...args: RestoreArgs): Promise<DaemonSessionClient> {
    return restore(client, sessionId, args, 'load');
  }

  /** Resumes a session with a fresh client id; `events()` starts at the returned watermark. */
  static resume(client: DaemonClient, sessionId: string, ...args: RestoreArgs): Promise<DaemonSessionClient> {
    return restore(client, sessionId, args, 'resume');
  }

  /** The bound session's id. */
  get sessionId(): string {
    return this.session.sessionId;
  }

  /** The workspace the session runs in. */
  get workspaceCwd(): string {
    return this.session.workspaceCwd;
  }

  /** True when this client joined an existing session (`single` scope). */
  get attached(): boolean {
    return this.session.attached;
  }

  /** The daemon-issued client id sent with this client's requests. */
  get clientId(): string | undefined {
    return this.session.clientId;
  }

  /** The last event id seen by `events()` (the next resume cursor). */
  get lastEventId(): number | undefined {
    return this.lastSeenEventId;
  }

  /** The bus epoch paired with {@link lastEventId}. */
  get eventEpoch(): string | undefined {
    return this.lastSeenEpoch;
  }

  /** The local limit this session client applies (`Infinity` when disabled). */
  get maxPendingPromptsPerSession(): number {
    return this.limit;
  }

  /** Prompts of the parent client currently holding a local slot of this session. */
  get pendingPromptCount(): number {
    return this.client.pendingPromptCount(this.sessionId);
  }

  /** Sets the cursor the next `events()` resumes from. */
  setLastEventId(lastEventId: number | undefined): void {
    this.lastSeenEventId = eventCursor('lastEventId', lastEventId);
  }

  /**
   * Sends a prompt and resolves when its turn ends. While an `events()` iteration is
   * connected the terminal event is taken from it; otherwise a temporary stream is opened.
   * Either way one local slot is held and released exactly once.
   */
  async prompt(request: PromptRequest, signal?: AbortSignal): Promise<P.PromptResult> {
    if (this.openStreams === 0) {
      try {
        return await this.client.runPrompt(this.sessionId, request, signal, this.clientId, this.limit);
      } catch (error) {
        // refused at admission, before anything ran: re-register and send once more
        if (!this.forgotUs(error)) throw error;
        await this.reattach();
        return this.client.runPrompt(this.sessionId, request, signal, this.clientId, this.limit);
      }
    }
    signal?.throwIfAborted();
    const release = this.client.reservePromptSlot(this.sessionId, this.limit);
    try {
      this.postsInFlight++;
      let admission;
      try {
        admission = await this.client
          .admitPrompt(this.sessionId, request, signal, this.clientId)
          .catch(async (error: unknown) => {
            if (!this.forgotUs(error)) throw error;
            await this.reattach();
            return this.client.admitPrompt(this.sessionId, request, signal, this.clientId);
          });
      } finally {
        this.postsInFlight--;
      }
      if ('result' in admission) return admission.result;
      return await this.waitForTerminal(admission.accepted, signal);
    } finally {
      release();
    }
  }

  /**
   * `400 invalid_client_id` naming this client: the daemon restarted or reloaded the session
   * and no longer knows our `clientId`. The prompt was refused at admission, so it never ran.
   */
  private forgotUs(error: unknown): boolean {
    return (
      error instanceof DaemonHttpError &&
      error.status === 400 &&
      error.code === 'invalid_client_id' &&
      this.clientId !== undefined
    );
  }

  /** Registers again (`POST /session/:id/resume`) for a fresh client id; concurrent callers share one call. */
  private reattach(): Promise<void> {
    this.reattaching ??= this.client
      .resumeSession(this.sessionId)
      .then((restored) => {
        this.session = {
          ...this.session,
          ...(restored.clientId === undefined ? {} : { clientId: restored.clientId }),
        };
      })
      .finally(() => (this.reattaching = undefined));
    return this.reattaching;
  }

  /** Sends a prompt and returns its `202` envelope only (no slot, no wait). */
  async submitPrompt(
    request: PromptRequest,
    signal?: AbortSignal,
  ): Promise<P.PromptAccepted | P.PromptResult> {
    return this.client.promptNonBlocking(this.sessionId, request, signal, this.clientId);
  }

  private waitForTerminal(
    accepted: P.PromptAccepted,
    signal: AbortSignal | undefined,
  ): Promise<P.PromptResult> {
    const early = this.waiters.takeEarly(accepted.promptId);
    if (early !== undefined) return new Promise((resolve) => resolve(settleTerminal(early)));
    // the stream closed while the POST was out, or the caller already left: no waiter needed
    if (this.openStreams === 0 || signal?.aborted)
      return this.client.awaitTurn(this.sessionId, accepted, signal, this.clientId);
    return this.waiters.wait(accepted, signal, () =>
      this.client.takeBackPrompt(this.sessionId, accepted.promptId, this.clientId),
    );
  }

  /**
   * The session's events (§6), resuming from this client's last seen id by default. While
   * it runs, it also settles this client's prompts; when it ends, prompts still waiting move
   * to temporary streams of their own.
   */
  async *events(options: DaemonSessionSubscribeOptions = {}): AsyncGenerator<DaemonEvent, void, unknown> {
    const { resume = true, ...rest } = options;
    const lastEventId = rest.lastEventId ?? (resume ? this.lastSeenEventId : undefined);
    const epoch = rest.epoch ?? this.lastSeenEpoch;
    let counted = false;
    const reset = new EpochResetWatch();
    try {
      const stream = this.client.subscribeEvents(this.sessionId, {
        ...rest,
        ...(lastEventId === undefined ? {} : { lastEventId }),
        ...(epoch === undefined ? {} : { epoch }),
        ...(this.clientId === undefined ? {} : { clientId: this.clientId }),
        onEpoch: (value) => {
          this.lastSeenEpoch = value;
          rest.onEpoch?.(value);
        },
        onSseStreamAccepted: (streamId) => {
          if (!counted) {
            counted = true;
            this.openStreams++;
          }
          rest.onSseStreamAccepted?.(streamId);
        },
      });
      for await (const event of stream) {
        if (event.id !== undefined) this.lastSeenEventId = event.id;
        if (reset.replayEnded(event)) this.waiters.rejectLost();
        this.waiters.dispatch(event, this.postsInFlight > 0);
        yield event;
      }
    } finally {
      if (counted) this.openStreams--;
      if (this.openStreams === 0)
        this.waiters.handOff((accepted, signal) =>
          this.client.awaitTurn(this.sessionId, accepted, signal, this.clientId),
        );
    }
  }

  /** @deprecated The reference's older name of {@link events}. */
  subscribeEvents(options: DaemonSessionSubscribeOptions = {}): AsyncGenerator<DaemonEvent, void, unknown> {
    return this.events(options);
  }

  /** Aborts the session's running prompt. */
  readonly cancel = (): Promise<void> => this.client.cancel(this.sessionId, this.clientId);

  /** The session's status summary. */
  readonly status = (): Promise<P.SessionSummary> => this.client.sessionStatus(this.sessionId, this.clientId);

  /** Running and queued prompts of the session. */
  readonly getPendingPrompts = (): Promise<P.PendingPromptsResponse> =>
    this.client.pendingPrompts(this.sessionId, this.clientId);

  /** Bumps this client's last-seen time on the daemon. */
  readonly heartbeat = (): Promise<P.HeartbeatResponse> =>
    this.client.heartbeat(this.sessionId, this.clientId);

  /** Closes the session (every pending prompt ends with `turn_error {code:'session_closed'}`). */
  readonly close = (): Promise<void> => this.client.closeSession(this.sessionId, this.clientId);

  /** Unregisters this client from the session. */
  readonly detach = (): Promise<void> => this.client.detachSession(this.sessionId, this.clientId);

  /** Removes a queued prompt or aborts the running one. */
  removePendingPrompt(promptId: string): Promise<P.RemovePendingPromptResponse> {
    return this.client.removePendingPrompt(
      this.sessionId,
      promptId,
      this.clientId === undefined ? {} : { clientId: this.clientId },
    );
  }

  /** Casts a permission vote; `false` when another client was first. */
  respondToPermission(requestId: string, response: P.PermissionVote): Promise<boolean> {
    return this.client.respondToPermission(requestId, response, this.clientId);
  }

  /** Casts a permission vote on this session's route. */
  respondToSessionPermission(requestId: string, response: P.PermissionVote): Promise<boolean> {
    return this.client.respondToSessionPermission(this.sessionId, requestId, response, this.clientId);
  }

  /** Branches the session (a copy of the conversation in a new session). */
  branch(request: BranchSessionRequest = {}): Promise<P.BranchedSessionHandle> {
    return this.client.branchSession(this.sessionId, request, this.clientId);
  }
}
