import type { FastifyInstance } from 'fastify';
import type { AcpHttpHandlers } from '../../acp/index.js';
import { defineRoute, type Route, type RouteParts } from '../route.js';
import { AcpConnectionIdHeader, AcpSessionIdHeader, JsonRpcMessage } from '../schemas/acp-schemas.js';
import { EventsQuery, LastEventIdHeader } from '../schemas/event-schemas.js';
import { ErrorBody } from '../schemas/common-schemas.js';

type AcpMethod = 'post' | 'get' | 'delete';
type Loader = () => Promise<AcpHttpHandlers>;

const loaders = new WeakMap<FastifyInstance, Loader>();

/**
 * The server's `/acp` handlers, shared by its three routes. The ACP SDK — and zod, which it
 * validates with — load on the first `/acp` request, not at start-up: a daemon that serves only
 * REST never pays for them (docs/decisions/009). Closing the server closes every connection.
 */
function acpHandlers(app: FastifyInstance, { acp, heartbeatMs }: RouteParts): Loader {
  let load = loaders.get(app);
  if (load !== undefined) return load;
  let handlers: Promise<AcpHttpHandlers> | undefined;
  load = () =>
    (handlers ??= import('../../acp/http/acp-http-handlers.js').then((module) =>
      module.createAcpHttpHandlers(app, acp.daemon, heartbeatMs, acp.options),
    ));
  app.addHook('preClose', async () => {
    if (handlers !== undefined) (await handlers).closeAll();
  });
  loaders.set(app, load);
  return load;
}

/** Mounts `method /acp` on the shared handlers; JSON-RPC answers a malformed body itself (-32700). */
function acpServing(method: AcpMethod) {
  return {
    rawBody: true,
    handler: (parts: RouteParts, app: FastifyInstance) => {
      const load = acpHandlers(app, parts);
      return async (
        request: Parameters<AcpHttpHandlers['get']>[0],
        reply: Parameters<AcpHttpHandlers['get']>[1],
      ) => (await load())[method](request, reply);
    },
  };
}

/** ACP over HTTP (PROTOCOL §8) on `/acp`, behind the same security gates as every route. */
export const ACP_ROUTES: readonly Route[] = [
  defineRoute(
    {
      method: 'POST',
      path: '/acp',
      tag: 'acp',
      rateLimit: 'exempt',
      summary: 'Send one ACP JSON-RPC message',
      description:
        '`initialize` is answered inline with an `Acp-Connection-Id` header; every other message ' +
        'needs that header and is answered `202`, its response arriving on the connection stream.',
      headers: {
        'Acp-Connection-Id': { schema: AcpConnectionIdHeader },
        'Acp-Session-Id': { schema: AcpSessionIdHeader },
      },
      body: {
        schema: JsonRpcMessage,
        required: true,
        example: {
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: {
            protocolVersion: 1,
            clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } },
          },
        },
      },
      responses: {
        200: {
          description: 'The response to `initialize`.',
          schema: JsonRpcMessage,
          example: {
            jsonrpc: '2.0',
            id: 0,
            result: { protocolVersion: 1, agentCapabilities: { loadSession: true }, authMethods: [] },
          },
        },
        202: { description: 'Accepted; the response comes on the stream.' },
        400: { description: 'No `Acp-Connection-Id`, or a JSON-RPC error.', schema: JsonRpcMessage },
        404: { description: 'Unknown connection.', schema: JsonRpcMessage },
        415: { description: 'Not `application/json`.' },
        501: { description: 'A batch.', schema: JsonRpcMessage },
      },
    },
    acpServing('post'),
  ),
  defineRoute<Record<string, string>, { maxQueued?: string }>(
    {
      method: 'GET',
      path: '/acp',
      tag: 'acp',
      rateLimit: 'exempt',
      summary: "An ACP connection's stream (SSE), or also a session's",
      description:
        'A server-sent event stream of JSON-RPC messages (needs `Accept: text/event-stream`, else `406`); ' +
        'with `Acp-Session-Id` also that session, replayed from `Last-Event-ID` as in PROTOCOL §6.',
      query: EventsQuery,
      headers: {
        'Acp-Connection-Id': { schema: AcpConnectionIdHeader, required: true },
        'Acp-Session-Id': { schema: AcpSessionIdHeader },
        'Last-Event-ID': { schema: LastEventIdHeader },
      },
      responses: {
        200: {
          description: 'The stream: `data: <JSON-RPC message>` frames.',
          schema: JsonRpcMessage,
          contentType: 'text/event-stream',
          example: {
            jsonrpc: '2.0',
            method: 'session/update',
            params: {
              sessionId: '4018d156-0781-4736-b548-79cdaeacb093',
              update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Hello' } },
            },
          },
        },
        400: { description: 'No `Acp-Connection-Id`.', schema: JsonRpcMessage },
        404: { description: 'Unknown connection or session.', schema: JsonRpcMessage },
        406: { description: 'Not `Accept: text/event-stream`.' },
      },
    },
    acpServing('get'),
  ),
  defineRoute(
    {
      method: 'DELETE',
      path: '/acp',
      tag: 'acp',
      rateLimit: 'exempt',
      summary: 'Close an ACP connection',
      description:
        'Ends the connection named by `Acp-Connection-Id`: its streams end and its sessions lose this client. Sessions stay open for their other clients.',
      headers: { 'Acp-Connection-Id': { schema: AcpConnectionIdHeader, required: true } },
      responses: {
        202: { description: 'Closed.' },
        400: {
          description: '`acp_connection_id_required`: no `Acp-Connection-Id`.',
          schema: ErrorBody,
          example: { error: 'Missing Acp-Connection-Id header', code: 'acp_connection_id_required' },
        },
        404: { description: '`acp_connection_not_found`.', schema: ErrorBody },
      },
    },
    acpServing('delete'),
  ),
];
