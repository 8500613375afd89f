import { CodedError } from '@sluice/protocol';
import { withOpenPermissions } from '../../permissions/index.js';
import { SESSION_NOT_FOUND, badInput } from '../openapi/route-doc.js';
import { clientIdOf, type SessionParams } from '../request-helpers.js';
import { defineRoute, type Route } from '../route.js';
import { ClientIdHeader, SessionIdParams } from '../schemas/common-schemas.js';
import { parseInput } from '../schemas/parse-input.js';
import {
  HeartbeatAnswer,
  SessionListPage,
  SessionListQuery,
  SessionSummary,
  WorkspaceParams,
  explainSessionListQuery,
} from '../schemas/session-schemas.js';
import { withWireTimes } from '../wire-time.js';
import { CLIENT_ID, NO_CONTENT } from './sessions.js';
import { EXAMPLE, SESSION_SUMMARY_EXAMPLE } from '../openapi/route-examples.js';

const status = defineRoute<SessionParams>(
  {
    method: 'GET',
    path: '/session/:id/status',
    tag: 'sessions',
    summary: "A live session's summary",
    description:
      'Its clients, whether a prompt runs, how many wait, and the permission requests still open (`pendingInteractions`), for a client that joins late or polls instead of streaming.',
    params: SessionIdParams,
    headers: CLIENT_ID,
    responses: {
      200: { description: 'The summary.', schema: SessionSummary, example: SESSION_SUMMARY_EXAMPLE },
      400: badInput(['invalid_client_id']),
      404: SESSION_NOT_FOUND,
    },
  },
  {
    handler:
      ({ sessions, permissions }) =>
      async (request) => {
        clientIdOf(request);
        return withWireTimes(withOpenPermissions(sessions.status(request.params.id), permissions));
      },
  },
);

// Stored sessions too (PROTOCOL §4, as the reference daemon lists them), newest first.
const workspaceSessions = defineRoute<{ cwd: string }>(
  {
    method: 'GET',
    path: '/workspace/:cwd/sessions',
    tag: 'sessions',
    summary: "A page of a workspace's stored and live sessions, newest first",
    description:
      "`:cwd` is the workspace path, URL-encoded (`%2Fsrv%2Fproject`), inside the served workspace. `size` sets the page size; pass the answer's `nextCursor` as `cursor` for the next page.",
    params: WorkspaceParams,
    query: SessionListQuery,
    responses: {
      200: {
        description: 'One page; follow `nextCursor` for the next.',
        schema: SessionListPage,
        example: { sessions: [SESSION_SUMMARY_EXAMPLE] },
      },
      400: badInput(['invalid_size', 'invalid_cursor', 'invalid_cwd', 'workspace_mismatch']),
    },
  },
  {
    handler:
      ({ sessions, permissions }) =>
      async (request) => {
        const query = parseInput(SessionListQuery, request.query, explainSessionListQuery);
        const size = query.size === undefined || query.size === '' ? undefined : Number(query.size);
        const cursor = query.cursor;
        const page = await sessions.listWorkspaceSessions(request.params.cwd, {
          ...(size === undefined ? {} : { size }),
          ...(cursor === undefined || cursor === '' ? {} : { cursor }),
        });
        const listed = page.sessions.map((summary) =>
          withWireTimes(withOpenPermissions(summary, permissions)),
        );
        return page.nextCursor === undefined
          ? { sessions: listed }
          : { sessions: listed, nextCursor: page.nextCursor };
      },
  },
);

const detach = defineRoute<SessionParams>(
  {
    method: 'POST',
    path: '/session/:id/detach',
    tag: 'sessions',
    summary: 'Leave a session (the client id header is required)',
    description:
      'The client stops counting as attached; the session lives on for its other clients and can be joined again. A session without clients is closed after its idle timeout.',
    params: SessionIdParams,
    headers: { 'X-Qwen-Client-Id': { schema: ClientIdHeader, required: true } },
    responses: { 204: NO_CONTENT, 400: badInput(['invalid_client_id']), 404: SESSION_NOT_FOUND },
  },
  {
    handler:
      ({ sessions }) =>
      async (request, reply) => {
        const clientId = clientIdOf(request);
        if (clientId === undefined)
          throw new CodedError('invalid_client_id', 'X-Qwen-Client-Id header is required to detach', {
            sessionId: request.params.id,
          });
        sessions.detachClient(request.params.id, clientId);
        return reply.code(204).send();
      },
  },
);

const heartbeat = defineRoute<SessionParams>(
  {
    method: 'POST',
    path: '/session/:id/heartbeat',
    tag: 'sessions',
    rateLimit: 'exempt',
    summary: 'Say the client is still there',
    description:
      'Keeps the client attached while it holds no event stream open; `lastSeenAt` is in epoch milliseconds. Never rate limited.',
    params: SessionIdParams,
    headers: CLIENT_ID,
    responses: {
      200: {
        description: 'When the client was last seen.',
        schema: HeartbeatAnswer,
        example: { sessionId: EXAMPLE.sessionId, clientId: EXAMPLE.clientId, lastSeenAt: 1796313547400 },
      },
      400: badInput(['invalid_client_id']),
      404: SESSION_NOT_FOUND,
    },
  },
  {
    handler:
      ({ sessions }) =>
      async (request) =>
        sessions.heartbeat(request.params.id, clientIdOf(request)),
  },
);

/** Status and listing of PROTOCOL §4, and a client leaving a session or saying it is still there. */
export const SESSION_CLIENT_ROUTES: readonly Route[] = [status, workspaceSessions, detach, heartbeat];
