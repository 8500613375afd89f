import type { OutgoingHttpHeaders } from 'node:http';
import type { AnyMessage, JsonRpcId } from '@agentclientprotocol/sdk';
import { CodedError, describeValue } from '@sluice/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AcpHttpRegistry, type AcpHttpRegistryOptions } from './acp-http-registry.js';
import { writeAcpSse } from './sse-writer.js';
import { asJsonRpcMessage, idOf, rpcErrorResponse as rpcError } from '../json-rpc-message.js';
import { RPC_CODE, toRequestError } from '../rpc-errors.js';
import type { AcpDaemon } from '../acp-daemon.js';
import { parseLastEventId, parseMaxQueued } from '../../events/index.js';
import { DaemonDrainingError } from '../../sessions/index.js';
import { mapError, parseJsonBody } from '../../wire/index.js';

/**
 * `clientInfo.name` of the official `@qwen-code/sdk` ACP-over-HTTP client. It starts waiting for
 * an answer on the SSE stream only once it has read the request's `202`, and drops an answer that
 * came first — which an in-process handler's answer regularly does. It also accepts the answer
 * inline (`200` with the JSON-RPC response), so its connections get answers that way.
 */
export const OFFICIAL_CLIENT_NAME = 'qwen-code-sdk';

/** Header naming the ACP connection (PROTOCOL §8). */
export const ACP_CONNECTION_HEADER = 'acp-connection-id';
/** Header naming the session a message or stream belongs to. */
export const ACP_SESSION_HEADER = 'acp-session-id';

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text.length === 0 ? undefined : text;
}

function clientNameOf(message: AnyMessage): unknown {
  const params = 'method' in message ? (message.params as { clientInfo?: { name?: unknown } } | null) : null;
  return params?.clientInfo?.name;
}

function isJson(contentType: string | undefined): boolean {
  return contentType?.split(';', 1)[0]?.trim().toLowerCase() === 'application/json';
}

function connectionOf(registry: AcpHttpRegistry, request: FastifyRequest) {
  const id = header(request, ACP_CONNECTION_HEADER);
  if (id === undefined)
    throw new CodedError('acp_connection_id_required', 'Missing Acp-Connection-Id header');
  const connection = registry.get(id);
  if (connection === undefined)
    throw new CodedError('acp_connection_not_found', `No ACP connection with id ${describeValue(id)}`, {
      connectionId: id,
    });
  return connection;
}

/** The `/acp` handlers, built on the first request by {@link acpRoutes}. */
export interface AcpHttpHandlers {
  post(request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  get(
    request: FastifyRequest<{ Querystring: { maxQueued?: string } }>,
    reply: FastifyReply,
  ): Promise<unknown>;
  delete(request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  /** Closes every ACP connection (server shutdown). */
  closeAll(): void;
}

/** The `/acp` endpoint: its connections, and the three methods a client calls it with. */
class AcpHttpEndpoint {
  constructor(
    private readonly daemon: AcpDaemon,
    private readonly registry: AcpHttpRegistry,
    private readonly heartbeatMs: number,
  ) {}

  async post(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    if (!isJson(request.headers['content-type']))
      throw new CodedError('unsupported_media_type', 'POST /acp takes Content-Type: application/json');
    let parsed: unknown;
    try {
      parsed = parseJsonBody(typeof request.body === 'string' ? request.body : '');
    } catch {
      return reply.code(400).send(rpcError(null, RPC_CODE.parseError, 'Parse error'));
    }
    if (Array.isArray(parsed))
      return reply
        .code(501)
        .send(rpcError(null, RPC_CODE.invalidRequest, 'JSON-RPC batches are not supported'));
    const message = asJsonRpcMessage(parsed);
    if (message === undefined) {
      const id = idOf(parsed);
      return reply
        .code(400)
        .send(rpcError(id, RPC_CODE.invalidRequest, 'Invalid Request: not a JSON-RPC 2.0 message'));
    }
    if ('method' in message && message.method === 'initialize' && 'id' in message)
      return this.initialize(reply, message as AnyMessage & { id: JsonRpcId });

    const connection = connectionOf(this.registry, request);
    const sessionHeader = header(request, ACP_SESSION_HEADER);
    const paramsSession =
      'method' in message ? (message.params as { sessionId?: unknown } | undefined)?.sessionId : undefined;
    if (sessionHeader !== undefined && typeof paramsSession === 'string' && paramsSession !== sessionHeader)
      throw new CodedError('acp_session_mismatch', 'Acp-Session-Id does not match params.sessionId', {
        sessionId: sessionHeader,
      });
    if ('method' in message && 'id' in message && connection.link.isPending(message.id))
      throw new CodedError('acp_duplicate_request_id', 'A request with this id is still unanswered', {
        id: message.id,
      });
    if ('method' in message && 'id' in message && connection.atCapacity)
      throw new CodedError(
        'acp_too_many_requests',
        'Too many ACP requests in flight on this connection; read the streams and retry',
      );
    connection.touch();
    if (connection.answersInline && 'method' in message && 'id' in message)
      return reply.code(200).send(await connection.link.call(message as AnyMessage & { id: JsonRpcId }));
    connection.link.receive(message, { sessionScoped: sessionHeader !== undefined });
    return reply.code(202).send();
  }

  /** `initialize` mints a connection; refusals are JSON-RPC errors mapped like any other. */
  private async initialize(reply: FastifyReply, message: AnyMessage & { id: JsonRpcId }): Promise<unknown> {
    const connection = this.daemon.bridge.draining ? undefined : this.registry.create();
    if (connection === undefined) {
      const refusal = this.daemon.bridge.draining
        ? new DaemonDrainingError()
        : new CodedError('acp_connection_limit_exceeded', 'Too many ACP connections; retry later', {
            limit: this.registry.maxConnections,
          });
      const { code, message: text, data } = toRequestError(refusal);
      const { statusCode, headers } = mapError(refusal);
      return reply
        .code(statusCode)
        .headers(headers)
        .send(rpcError(message.id, code, text, data as Record<string, unknown>));
    }
    const response = await connection.link.call(message);
    if ('error' in response) {
      this.registry.close(connection.id);
      return reply.code(400).send(response);
    }
    connection.answersInline = clientNameOf(message) === OFFICIAL_CLIENT_NAME;
    return reply.code(200).header('Acp-Connection-Id', connection.id).send(response);
  }

  async get(
    request: FastifyRequest<{ Querystring: { maxQueued?: string } }>,
    reply: FastifyReply,
  ): Promise<unknown> {
    const accept = request.headers.accept ?? '';
    if (!accept.toLowerCase().includes('text/event-stream'))
      throw new CodedError('not_acceptable', 'GET /acp streams events: send Accept: text/event-stream');
    const connection = connectionOf(this.registry, request);
    const sessionId = header(request, ACP_SESSION_HEADER);
    const headers = reply.getHeaders() as OutgoingHttpHeaders;
    if (sessionId === undefined) {
      const merger = connection.takeConnectionStream();
      if (merger === undefined)
        throw new CodedError('acp_stream_active', 'The connection stream already has a reader');
      reply.hijack();
      writeAcpSse(request.raw, reply.raw, merger, {
        heartbeatMs: this.heartbeatMs,
        headers,
        onEnd: () => connection.releaseConnectionStream(),
        keepOpen: true,
      });
      return;
    }
    const lastEventId = parseLastEventId(request.headers['last-event-id']);
    const epoch = header(request, 'x-qwen-event-epoch');
    const maxQueued = parseMaxQueued(request.query.maxQueued);
    const opened = connection.openSessionStream(sessionId, {
      ...(lastEventId === undefined ? {} : { lastEventId }),
      ...(epoch === undefined ? {} : { epoch }),
      ...(maxQueued === undefined ? {} : { maxQueued }),
    });
    if (opened === null)
      throw new CodedError(
        'acp_session_stream_limit_exceeded',
        'Too many session streams on this connection',
      );
    reply.hijack();
    writeAcpSse(request.raw, reply.raw, opened.merger, {
      heartbeatMs: this.heartbeatMs,
      headers: opened.epoch === undefined ? headers : { ...headers, 'X-Qwen-Event-Epoch': opened.epoch },
      onEnd: () => connection.releaseSessionStream(sessionId, opened.merger),
    });
  }

  async remove(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const connection = connectionOf(this.registry, request);
    this.registry.close(connection.id);
    return reply.code(202).send();
  }
}

/**
 * ACP over HTTP (PROTOCOL §8) on `/acp`: `POST` one JSON-RPC message (`initialize` → `200`
 * inline + `Acp-Connection-Id`; anything else → `202`, answered on a stream), `GET` the
 * connection or session SSE stream, `DELETE` the connection. The POST body arrives as raw
 * text: JSON-RPC answers a malformed body itself (-32700).
 */
export function createAcpHttpHandlers(
  app: FastifyInstance,
  daemon: AcpDaemon,
  heartbeatMs: number,
  options: Partial<AcpHttpRegistryOptions> = {},
): AcpHttpHandlers {
  const registry = new AcpHttpRegistry(daemon, {
    log: (error, context) => app.log.error({ err: error, context }, 'acp request failed'),
    ...options,
  });
  const endpoint = new AcpHttpEndpoint(daemon, registry, heartbeatMs);
  return {
    post: (request, reply) => endpoint.post(request, reply),
    get: (request, reply) => endpoint.get(request, reply),
    delete: (request, reply) => endpoint.remove(request, reply),
    closeAll: () => registry.closeAll(),
  };
}
