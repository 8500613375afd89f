import type { AgentConnection, AnyMessage, AnyResponse, JsonRpcId } from '@agentclientprotocol/sdk';
import type { AcpDaemon } from './acp-daemon.js';
import { PermissionError } from '../permissions/index.js';
import { buildAcpAgent, type AcpSessionHost } from './acp-agent.js';

/** Where the answer to a request goes: the connection's own stream, or a session's stream. */
export type AcpRoute = { kind: 'connection' } | { kind: 'session'; sessionId: string };

/** Methods answered on the connection stream: the session stream may not exist yet (or any more). */
const CONNECTION_ROUTED = new Set([
  'initialize',
  'authenticate',
  'session/new',
  'session/load',
  'session/resume',
  'session/list',
]);

/** What a transport supplies to an {@link AcpLink}. */
export interface AcpLinkOptions {
  daemon: AcpDaemon;
  /**
   * Hands a message the agent side wrote (a response) to the transport, with its route and the
   * session the answered request named (if any).
   */
  deliver(message: AnyMessage, route: AcpRoute, sessionId: string | undefined): void;
  /** Called after this connection created or attached a session (`replay`: load its history). */
  onAttach(sessionId: string, replay: boolean): void;
  onDetach(sessionId: string): void;
  log(error: unknown, context: string): void;
}

function idKey(id: JsonRpcId): string {
  return `${typeof id}:${String(id)}`;
}

function isResponse(message: AnyMessage): message is AnyResponse {
  return !('method' in message) && 'id' in message;
}

function sessionIdOf(message: AnyMessage): string | undefined {
  if (!('method' in message)) return undefined;
  const params = message.params as { sessionId?: unknown } | null | undefined;
  return typeof params?.sessionId === 'string' ? params.sessionId : undefined;
}

/**
 * One ACP connection, whatever carries it (HTTP + SSE, or stdio): an {@link buildAcpAgent}
 * app fed through an in-memory stream. Inbound requests and notifications go to the app;
 * inbound responses are votes on permission requests and go to the broker. Outbound
 * responses are routed (connection or session stream) by the request they answer.
 */
export class AcpLink {
  readonly connection: AgentConnection;
  private readonly routes = new Map<string, { route: AcpRoute; sessionId: string | undefined }>();
  private readonly pendingBySession = new Map<string, number>();
  private readonly inline = new Map<string, (message: AnyMessage) => void>();
  private readonly clients = new Map<string, string>();
  private inbound!: ReadableStreamDefaultController<AnyMessage>;
  private closed = false;

  constructor(private readonly options: AcpLinkOptions) {
    const readable = new ReadableStream<AnyMessage>({
      start: (controller) => {
        this.inbound = controller;
      },
    });
    const writable = new WritableStream<AnyMessage>({ write: (message) => this.onOutbound(message) });
    const host: AcpSessionHost = {
      attach: (sessionId, clientId, replay) => {
        this.clients.set(sessionId, clientId);
        options.onAttach(sessionId, replay);
      },
      detach: (sessionId) => {
        this.clients.delete(sessionId);
        options.onDetach(sessionId);
      },
      clientIdFor: (sessionId) => this.clients.get(sessionId),
      log: options.log,
    };
    this.connection = buildAcpAgent(options.daemon, host).connect({ readable, writable });
  }

  /** Requests received and not yet answered. */
  get pendingRequests(): number {
    return this.routes.size + this.inline.size;
  }

  /** Whether a request with this id is still unanswered (a client must not reuse it until then). */
  isPending(id: JsonRpcId): boolean {
    const key = idKey(id);
    return this.routes.has(key) || this.inline.has(key);
  }

  /** Requests naming `sessionId` not yet answered (a client fails them when the session stream ends). */
  pendingFor(sessionId: string): number {
    return this.pendingBySession.get(sessionId) ?? 0;
  }

  /** Sessions this connection created or attached, with the client id stamped for it. */
  get attachedSessions(): ReadonlyMap<string, string> {
    return this.clients;
  }

  /** Takes one inbound message: a vote (response) goes to the broker, the rest to the agent app. */
  receive(message: AnyMessage): void {
    if (this.closed) return;
    if (isResponse(message)) {
      this.vote(message);
      return;
    }
    if ('id' in message) {
      const sessionId = sessionIdOf(message);
      this.routes.set(idKey(message.id), { route: this.routeOf(message.method, sessionId), sessionId });
      if (sessionId !== undefined)
        this.pendingBySession.set(sessionId, (this.pendingBySession.get(sessionId) ?? 0) + 1);
    }
    this.inbound.enqueue(message);
  }

  /** Sends a request and resolves with its response instead of routing it (`initialize` over HTTP). */
  call(message: AnyMessage & { id: JsonRpcId }): Promise<AnyMessage> {
    return new Promise((resolve) => {
      this.inline.set(idKey(message.id), resolve);
      this.inbound.enqueue(message);
    });
  }

  /** Closes the agent app: handler signals abort (prompts of this connection are cancelled). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.connection.close();
    try {
      this.inbound.close();
    } catch {
      /* already closed by the app */
    }
    for (const [sessionId, clientId] of this.clients)
      try {
        this.options.daemon.bridge.detachClient(sessionId, clientId);
      } catch {
        /* the session is gone, or the client already left */
      }
    this.clients.clear();
  }

  private routeOf(method: string, sessionId: string | undefined): AcpRoute {
    return sessionId === undefined || CONNECTION_ROUTED.has(method)
      ? { kind: 'connection' }
      : { kind: 'session', sessionId };
  }

  private onOutbound(message: AnyMessage): void {
    if (isResponse(message)) {
      const key = idKey(message.id);
      const resolveInline = this.inline.get(key);
      if (resolveInline !== undefined) {
        this.inline.delete(key);
        resolveInline(message);
        return;
      }
      const pending = this.routes.get(key);
      this.routes.delete(key);
      const sessionId = pending?.sessionId;
      if (sessionId !== undefined) {
        const left = (this.pendingBySession.get(sessionId) ?? 1) - 1;
        if (left > 0) this.pendingBySession.set(sessionId, left);
        else this.pendingBySession.delete(sessionId);
      }
      this.options.deliver(message, pending?.route ?? { kind: 'connection' }, sessionId);
      return;
    }
    this.options.deliver(message, { kind: 'connection' }, undefined);
  }

  /** A client's answer to `session/request_permission`: its id is the broker's requestId. */
  private vote(message: AnyResponse): void {
    if (typeof message.id !== 'string') return;
    const outcome =
      'error' in message
        ? { outcome: 'cancelled' }
        : (message.result as { outcome?: unknown } | null)?.outcome;
    const sessionId = this.options.daemon.permissions.sessionOf(message.id);
    const clientId = sessionId === undefined ? undefined : this.clients.get(sessionId);
    try {
      this.options.daemon.permissions.vote(message.id, outcome, clientId === undefined ? {} : { clientId });
    } catch (error) {
      // Late or invalid votes are the client's business: the broker already published
      // `permission_already_resolved` where that applies.
      if (!(error instanceof PermissionError)) this.options.log(error, 'acp permission vote');
    }
  }
}
