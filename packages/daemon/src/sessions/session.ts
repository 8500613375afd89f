import type { ConversationMessage } from './agent.js';
import { ClientRegistry } from './clients.js';
import { ConversationLog, isConversationMessage } from './conversation.js';
import { InvalidClientIdError, SessionClosedError } from './errors.js';
import { PromptRunner } from './prompt-runner.js';
import type { RunnerHost, RunnerServices, SessionState } from './runner-host.js';
import { createDeferred } from './queue-items.js';
import { SESSION_EVENT, type SessionEvent, type SessionEventSink } from './session-events.js';
import type { SessionRecord, SessionScope } from '@sluice/store';
import { IdempotencyKeys } from './idempotency.js';
import type { SessionModels } from './options.js';

/** The create/attach/restore answer (PROTOCOL §4), less the event-bus fields. */
export interface SessionHandle {
  sessionId: string;
  workspaceCwd: string;
  attached: boolean;
  clientId: string;
  /** Wall-clock epoch milliseconds. */
  createdAt: number;
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
  /** The catalogue model the session's agent calls (absent for a session of no catalogue). */
  model?: string;
  clientCount: number;
  hasActivePrompt: boolean;
  pendingPromptCount: number;
  isWaitingForPermission: boolean;
  pendingInteractionCount: number;
  pendingInteractions: unknown[];
}

/** What a session is made from: a new one, a branch, or a stored record. */
export interface SessionParams extends Omit<SessionRecord, 'conversation'> {
  conversation: readonly ConversationMessage[];
}

/** What every session of a bridge shares: its limits, time, ids and where its events go. */
export interface SessionServices extends RunnerServices {
  readonly events: SessionEventSink;
  readonly wallNow: () => number;
  readonly newId: () => string;
  readonly maxClientsPerSession: number;
  readonly maxConversationMessages: number;
  readonly maxConversationBytes: number;
  /** The models a new session may pick; absent: sessions name none. */
  readonly models: SessionModels | undefined;
  /** Saves a session; `undefined` when there is no store. Never rejects. */
  save(session: Session): Promise<void> | undefined;
  /** The session finished closing: forget it. */
  closed(session: Session): void;
}

/** What a summary says of a session's activity; a stored session that is not live has none. */
export interface SessionActivity {
  clientCount: number;
  hasActivePrompt: boolean;
  pendingPromptCount: number;
}

const IDLE: SessionActivity = { clientCount: 0, hasActivePrompt: false, pendingPromptCount: 0 };

/** The summary of a live or stored session (no permission is open in either here). */
export function summaryOf(
  session: Pick<
    SessionRecord,
    'sessionId' | 'workspaceCwd' | 'cwd' | 'createdAt' | 'updatedAt' | 'displayName' | 'forkedFrom' | 'model'
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
  if (session.model !== undefined) summary.model = session.model;
  return summary;
}

/**
 * One live session: its identity, clients, bounded conversation and the events it publishes,
 * with a {@link PromptRunner} serving its FIFO. It closes itself (`beginClose`) and tells its
 * bridge when it is done.
 */
export class Session implements RunnerHost {
  readonly sessionId: string;
  readonly workspaceCwd: string;
  readonly cwd: string;
  readonly scope: SessionScope;
  readonly createdAt: number;
  readonly forkedFrom: { sessionId: string } | undefined;
  readonly model: string | undefined;
  updatedAt: number;
  displayName: string | undefined;
  state: SessionState = 'open';
  readonly clients: ClientRegistry;
  readonly conversation: ConversationLog;
  readonly runner: PromptRunner;
  /** The `Idempotency-Key`s of its admitted prompts, bounded. */
  readonly idempotencyKeys = new IdempotencyKeys();
  /** When a client last did something here, on the monotonic clock (`--session-idle-timeout-ms`). */
  lastActiveAt: number;
  private readonly whenClosed = createDeferred<void>();

  constructor(
    params: SessionParams,
    private readonly services: SessionServices,
  ) {
    this.sessionId = params.sessionId;
    this.workspaceCwd = params.workspaceCwd;
    this.cwd = params.cwd;
    this.scope = params.scope;
    this.createdAt = params.createdAt;
    this.updatedAt = params.updatedAt;
    this.displayName = params.displayName;
    this.forkedFrom = params.forkedFrom;
    this.model = params.model;
    this.clients = new ClientRegistry(services.maxClientsPerSession);
    this.conversation = new ConversationLog(
      services.maxConversationMessages,
      services.maxConversationBytes,
      params.conversation,
    );
    this.runner = new PromptRunner(this, services);
    this.lastActiveAt = services.clock.now();
  }

  /** A client attached, prompted or said it is still there: the idle countdown starts again. */
  markActive(): void {
    this.lastActiveAt = this.services.clock.now();
  }

  /** Resolves once the session is closed and its running agent returned. */
  get closed(): Promise<void> {
    return this.whenClosed.promise;
  }

  /** Publishes on the session's stream; a throwing sink is reported and changes nothing. */
  publish(event: SessionEvent): void {
    try {
      this.services.events.publish(this.sessionId, event);
    } catch (error) {
      this.services.onError(error, `publish ${event.type}`);
    }
  }

  /** Registers a client (`clientId`, or a fresh one) and answers as create/attach/restore do. */
  attach(clientId: string | undefined, attached: boolean): SessionHandle {
    this.markActive();
    const client = this.clients.register(clientId ?? this.services.newId(), this.services.wallNow());
    return {
      sessionId: this.sessionId,
      workspaceCwd: this.workspaceCwd,
      attached,
      clientId: client.clientId,
      createdAt: this.createdAt,
    };
  }

  /** Marks a registered client as seen now; `InvalidClientIdError` for an unknown one. */
  touchClient(clientId: string): { lastSeenAt: number } {
    this.markActive();
    const record = this.clients.touch(clientId, this.services.wallNow());
    if (record === undefined) throw new InvalidClientIdError(clientId, this.sessionId);
    return record;
  }

  summary(): SessionSummary {
    return summaryOf(this, {
      clientCount: this.clients.size,
      hasActivePrompt: this.runner.hasActivePrompt,
      pendingPromptCount: this.runner.pendingPromptCount,
    });
  }

  /** What the store keeps of the session now. */
  toRecord(): SessionRecord {
    const record: SessionRecord = {
      sessionId: this.sessionId,
      workspaceCwd: this.workspaceCwd,
      cwd: this.cwd,
      scope: this.scope,
      createdAt: this.createdAt,
      updatedAt: this.updatedAt,
      conversation: this.conversation.snapshot(),
    };
    if (this.displayName !== undefined) record.displayName = this.displayName;
    if (this.forkedFrom !== undefined) record.forkedFrom = { ...this.forkedFrom };
    if (this.model !== undefined) record.model = this.model;
    return record;
  }

  /** The name a branch of this session is called after: its own, or its first prompt. */
  baseName(): string {
    if (this.displayName !== undefined) return this.displayName.replace(/\s*\(Branch\)$/, '');
    const first = this.conversation
      .snapshot()
      .find((message) => message.role === 'user')
      ?.content.trim();
    return first ? first.slice(0, 60) : this.sessionId.slice(0, 8);
  }

  /** Replays the stored conversation as `session_update` events (`load`). */
  replayHistory(): void {
    for (const message of this.conversation.snapshot()) {
      if (message.role === 'tool') continue;
      this.publish({
        type: SESSION_EVENT.sessionUpdate,
        data: {
          sessionId: this.sessionId,
          update: {
            sessionUpdate: message.role === 'user' ? 'user_message_chunk' : 'agent_message_chunk',
            content: { type: 'text', text: message.content },
          },
        },
      });
    }
  }

  /**
   * Starts closing: every pending prompt ends `turn_error {code:'session_closed'}`, queued
   * branches reject, then `session_closed` is published. Done once the running agent returned.
   */
  beginClose(reason: string, clientId: string | undefined): void {
    this.state = 'closing';
    this.runner.close(new SessionClosedError(this.sessionId, reason), () => {
      const data: Record<string, unknown> = { sessionId: this.sessionId, reason };
      if (clientId !== undefined) data['closedBy'] = clientId;
      this.publish({
        type: SESSION_EVENT.sessionClosed,
        data,
        ...(clientId === undefined ? {} : { originatorClientId: clientId }),
      });
    });
  }

  // ── RunnerHost ──────────────────────────────────────────────────────────────────────

  history(): ConversationMessage[] {
    return this.conversation.snapshot();
  }

  recordTurn(text: string, messages: readonly unknown[] | undefined): void {
    this.conversation.append({ role: 'user', content: text });
    for (const message of messages ?? [])
      if (isConversationMessage(message)) this.conversation.append(message);
    this.touch();
  }

  touch(): void {
    this.markActive();
    this.updatedAt = this.services.wallNow();
  }

  save(): Promise<void> | undefined {
    return this.services.save(this);
  }

  finishClose(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.services.closed(this);
    this.whenClosed.resolve();
  }
}
