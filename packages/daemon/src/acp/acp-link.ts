import type { AgentConnection, AnyMessage, AnyResponse, JsonRpcId } from '@agentclientprotocol/sdk';
import type { AcpDaemon } from './acp-daemon.js';
import { PermissionError } from '../permissions/index.js';
import { ACP_PROTOCOL_VERSION, buildAcpAgent, type AcpSessionHost } from './acp-agent.js';
import { withoutEchoes } from './rpc-errors.js';

/**
 * Where the answer to a request goes: the connection's own stream, or a session's stream. A
 * `waits` answer (the turn and the session's settings) waits for the session's stream when none
 * is open; any other answer naming a session takes the connection stream then.
 */
export type AcpRoute = { kind: 'connection' } | { kind: 'session'; sessionId: string; waits: boolean };

/**
 * Methods answered only on the stream of the session they name (PROTOCOL §8), as in the
 * reference daemon: the turn and the session's settings. The official client reads these answers
 * only there, and opens that stream after posting the request, so they wait for it.
 */
const SESSION_ROUTED = new Set([
  'session/prompt',
  'session/cancel',
  'session/set_mode',
  'session/set_config_option',
  'session/set_model',
]);

/** Methods answered on the connection stream even when posted to a session's stream. */
const CONNECTION_ROUTED = new Set(['session/new', 'session/load', 'session/resume', 'session/list']);

/** How a transport received a message. */
export interface AcpReceipt {
  /**
   * The message was posted to a session's stream (`Acp-Session-Id`, as the ACP SDK client
   * does): its answer goes to that stream while it is open. Without it, only the turn and
   * setting methods are answered there (the official client sends no such header and waits for
   * other answers on the connection stream).
   */
  sessionScoped?: boolean;
}

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
  /** The client answered the permission request `requestId` (with a vote or an error). */
  onPermissionAnswer?(requestId: string): void;
  log(error: unknown, context: string): void;
}

function idKey(id: JsonRpcId): string {
  return `${typeof id}:${String(id)}`;
}

function isResponse(message: AnyMessage): message is AnyResponse {
  return !('method' in message) && 'id' in message;
}

/**
 * `initialize` with `params.protocolVersion` filled in when the client left it out: the official
 * `@qwen-code/sdk` ACP-HTTP client sends none, and the reference daemon negotiates version 1 for
 * it. A version of the wrong type is left alone for the schema to refuse (`-32602`).
 */
export function withDefaultProtocolVersion<M extends AnyMessage>(message: M, version: number): M {
  if (!('method' in message) || message.method !== 'initialize') return message;
  const params = message.params;
  if (params !== undefined && params !== null && (typeof params !== 'object' || Array.isArray(params)))
    return message;
  const record = (params ?? {}) as Record<string, unknown>;
  if (record['protocolVersion'] !== undefined) return message;
  return { ...message, params: { ...record, protocolVersion: version } };
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
  /** The `initialize` request being answered: what arrives meanwhile waits in `held`. */
  private initializing: string | undefined;
  private held: Array<[AnyMessage, AcpReceipt]> = [];

  constructor(private readonly options: AcpLinkOptions) {
    const readable = new ReadableStream<AnyMessage>({
      start: (controller) => {
        this.inbound = controller;
      },
    });
    const writable = new WritableStream<AnyMessage>({
      write: (message) => this.onOutbound(withoutEchoes(message)),
    });
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

  /** Requests received and not yet answered (held ones included). */
  get pendingRequests(): number {
    return this.routes.size + this.inline.size + this.held.length;
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

  /**
   * Takes one inbound message: a vote (response) goes to the broker, the rest to the agent app.
   * Messages are handled in the order they arrive: while an `initialize` is being answered, what
   * a client pipelined behind it waits (the app refuses any request before its answer).
   */
  receive(message: AnyMessage, receipt: AcpReceipt = { sessionScoped: true }): void {
    if (this.closed) return;
    if (this.initializing !== undefined) {
      this.held.push([message, receipt]);
      return;
    }
    if ('method' in message && message.method === 'initialize' && 'id' in message)
      this.initializing = idKey(message.id);
    if (isResponse(message)) {
      this.vote(message);
      return;
    }
    if ('id' in message) {
      const sessionId = sessionIdOf(message);
      this.routes.set(idKey(message.id), {
        route: this.routeOf(message.method, sessionId, receipt.sessionScoped === true),
        sessionId,
      });
      if (sessionId !== undefined)
        this.pendingBySession.set(sessionId, (this.pendingBySession.get(sessionId) ?? 0) + 1);
    }
    this.inbound.enqueue(withDefaultProtocolVersion(message, ACP_PROTOCOL_VERSION));
  }

  /** Sends a request and resolves with its response instead of routing it (`initialize` over HTTP). */
  call(message: AnyMessage & { id: JsonRpcId }): Promise<AnyMessage> {
    return new Promise((resolve) => {
      this.inline.set(idKey(message.id), resolve);
      this.inbound.enqueue(withDefaultProtocolVersion(message, ACP_PROTOCOL_VERSION));
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

  private routeOf(method: string, sessionId: string | undefined, sessionScoped: boolean): AcpRoute {
    if (sessionId === undefined) return { kind: 'connection' };
    if (SESSION_ROUTED.has(method)) return { kind: 'session', sessionId, waits: true };
    return sessionScoped && !CONNECTION_ROUTED.has(method)
      ? { kind: 'session', sessionId, waits: false }
      : { kind: 'connection' };
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
      this.deliverAnswer(key, message);
      if (key === this.initializing) this.releaseHeld();
      return;
    }
    this.options.deliver(message, { kind: 'connection' }, undefined);
  }

  /** `initialize` is answered: what arrived meanwhile goes on, in order (up to a next one). */
  private releaseHeld(): void {
    this.initializing = undefined;
    const held = this.held;
    this.held = [];
    for (const [message, receipt] of held) this.receive(message, receipt);
  }

  /** Hands an answer to the transport, routed by the request it answers. */
  private deliverAnswer(key: string, message: AnyMessage): void {
    const pending = this.routes.get(key);
    this.routes.delete(key);
    const sessionId = pending?.sessionId;
    if (sessionId !== undefined) {
      const left = (this.pendingBySession.get(sessionId) ?? 1) - 1;
      if (left > 0) this.pendingBySession.set(sessionId, left);
      else this.pendingBySession.delete(sessionId);
    }
    this.options.deliver(message, pending?.route ?? { kind: 'connection' }, sessionId);
  }

  /** A client's answer to `session/request_permission`: its id is the broker's requestId. */
  private vote(message: AnyResponse): void {
    if (typeof message.id !== 'string') return;
    this.options.onPermissionAnswer?.(message.id);
    // An error answer is this client's failure to ask its user, not a vote: `cancelled` would
    // abort the turn for every client. The request stays open for the others (and the timeout).
    if ('error' in message) return;
    const outcome = (message.result as { outcome?: unknown } | null)?.outcome;
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
