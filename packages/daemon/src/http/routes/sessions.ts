import type { SessionBridge } from '../../sessions/index.js';
import { SESSION_NOT_FOUND, badInput, overloaded, type RouteDoc } from '../openapi/route-doc.js';
import { assertAdmitting, clientIdOf, registeredClientIdOf, type SessionParams } from '../request-helpers.js';
import { defineRoute, type Route } from '../route.js';
import { ClientIdHeader, ErrorBody, SessionIdParams } from '../schemas/common-schemas.js';
import { parseInput } from '../schemas/parse-input.js';
import { parseBody } from '../schemas/request-body.js';
import {
  BranchBody,
  BranchedSession,
  CreateSessionBody,
  DeleteSessionQuery,
  RestoreSessionBody,
  RestoredSession,
  SessionHandle,
  explainBranch,
  explainCreateSession,
  explainDeleteSessionQuery,
  explainRestoreSession,
} from '../schemas/session-schemas.js';
import { withWireTimes } from '../wire-time.js';
import { EXAMPLE, SESSION_HANDLE_EXAMPLE } from '../openapi/route-examples.js';

/** The client id header most session routes read. */
export const CLIENT_ID = { 'X-Qwen-Client-Id': { schema: ClientIdHeader } };
/** A `204` without a body. */
export const NO_CONTENT = { description: 'Done; no body.' };

const createSession = defineRoute(
  {
    method: 'POST',
    path: '/session',
    tag: 'sessions',
    summary: 'Create a session, or join the workspace session',
    description:
      'Scope `single` (default) coalesces onto one session per workspace (`attached: true` on a repeat ' +
      'call, with a new `clientId`); `thread` always creates. An external agent that cannot start ' +
      'answers `502 agent_unavailable`.',
    headers: CLIENT_ID,
    body: { schema: CreateSessionBody, required: false, example: { sessionScope: 'thread' } },
    responses: {
      200: { description: 'The session.', schema: SessionHandle, example: SESSION_HANDLE_EXAMPLE },
      400: badInput([
        'invalid_body',
        'invalid_session_scope',
        'invalid_cwd',
        'workspace_mismatch',
        'invalid_session_id',
        'unknown_agent',
        'invalid_model',
        'model_not_switchable',
        'invalid_client_id',
      ]),
      404: { description: '`model_not_found`: the catalogue has no such model.', schema: ErrorBody },
      502: { description: '`agent_unavailable`: the agent could not start.', schema: ErrorBody },
      503: overloaded(['session_limit_exceeded', 'agent_pool_exhausted', 'daemon_draining']),
    },
  },
  {
    handler:
      ({ sessions }) =>
      async (request) => {
        const {
          sessionScope: scope,
          cwd,
          sessionId,
          agent,
          model,
        } = parseBody(CreateSessionBody, request, explainCreateSession);
        const clientId = clientIdOf(request);
        assertAdmitting(sessions);
        return withWireTimes(
          await sessions.openSession({
            ...(cwd === undefined ? {} : { cwd }),
            ...(scope === undefined ? {} : { scope }),
            ...(sessionId === undefined || sessionId === null ? {} : { sessionId: sessionId.toLowerCase() }),
            ...(clientId === undefined ? {} : { clientId }),
            ...(agent === undefined || agent === null ? {} : { agent }),
            ...(model === undefined || model === null ? {} : { model }),
          }),
        );
      },
  },
);

/** `POST /session/:id/load` or `/resume`: a stored session back (load replays its history). */
function restoreSession(mode: 'load' | 'resume'): Route {
  const doc: RouteDoc = {
    method: 'POST',
    path: `/session/:id/${mode}`,
    tag: 'sessions',
    summary:
      mode === 'load'
        ? 'Load a stored session, replaying its history on the event stream'
        : 'Resume a stored or live session with a fresh client id',
    description:
      mode === 'load'
        ? "Opens a stored session again (after a restart or a close) and replays its history as events from `lastEventId` on; `X-Qwen-Client-Id` keeps the caller's client id. `cwd`, when given, must be inside the served workspace."
        : 'Opens a stored session again, or joins a live one, without replaying its history: the caller gets a fresh client id and reads new events from `lastEventId`.',
    params: SessionIdParams,
    headers: CLIENT_ID,
    body: { schema: RestoreSessionBody, required: false, example: { cwd: EXAMPLE.workspaceCwd } },
    responses: {
      200: {
        description: 'The session and where its event stream stands.',
        schema: RestoredSession,
        example: {
          ...SESSION_HANDLE_EXAMPLE,
          attached: true,
          lastEventId: 0,
          eventEpoch: EXAMPLE.eventEpoch,
        },
      },
      400: badInput(['invalid_body', 'invalid_cwd', 'workspace_mismatch', 'invalid_client_id']),
      404: SESSION_NOT_FOUND,
      503: overloaded(['session_limit_exceeded', 'daemon_draining']),
    },
  };
  return defineRoute<SessionParams>(doc, {
    handler:
      ({ sessions }) =>
      async (request) => {
        // `cwd` (the official client sends its workspace) must name the session's workspace.
        const { cwd } = parseBody(RestoreSessionBody, request, explainRestoreSession);
        const clientId = clientIdOf(request);
        assertAdmitting(sessions);
        const handle = await sessions.restoreSession(request.params.id, {
          mode,
          ...(clientId === undefined || mode === 'resume' ? {} : { clientId }),
          ...(cwd === undefined ? {} : { cwd }),
        });
        const bus = sessions.eventStream(handle.sessionId);
        return { ...withWireTimes(handle), lastEventId: bus.lastEventId, eventEpoch: bus.epoch };
      },
  });
}

const closeSession = defineRoute<SessionParams>(
  {
    method: 'DELETE',
    path: '/session/:id',
    tag: 'sessions',
    summary: 'Close a live session for every client (with `?purge=true`: delete it for good)',
    description:
      'Its running and queued prompts end with `turn_error {code:"session_closed"}`, then a ' +
      '`session_closed` event; it stays stored and can be loaded again — unless `purge=true`, which ' +
      'also deletes the stored session, its history and its finished model calls.',
    params: SessionIdParams,
    query: DeleteSessionQuery,
    headers: CLIENT_ID,
    responses: {
      204: NO_CONTENT,
      400: badInput(['invalid_client_id', 'invalid_purge']),
      404: SESSION_NOT_FOUND,
    },
  },
  {
    handler:
      ({ sessions }) =>
      async (request, reply) => {
        const { purge } = parseInput(DeleteSessionQuery, request.query, explainDeleteSessionQuery);
        const { id } = request.params;
        const clientId = clientIdOf(request);
        // `?purge=true` also deletes the stored session and its history (sessions layer).
        if (purge === 'true') return reply.code(204).send(await sessions.purgeSession(id, clientId));
        void sessions.closeSession(id, {
          reason: 'client_close',
          ...(clientId === undefined ? {} : { clientId }),
        });
        return reply.code(204).send();
      },
  },
);

const branchSession = defineRoute<SessionParams>(
  {
    method: 'POST',
    path: '/session/:id/branch',
    tag: 'sessions',
    summary: 'Branch a session: a new session with a copy of the conversation',
    description:
      'The branch starts with the conversation so far and goes its own way; the original is untouched. Refused with `409 branch_while_prompt_active` while a prompt runs. The caller must be a client of the session.',
    params: SessionIdParams,
    headers: CLIENT_ID,
    body: { schema: BranchBody, required: false, example: { name: 'try the other fix' } },
    responses: {
      201: {
        description: 'The new session.',
        schema: BranchedSession,
        example: {
          ...SESSION_HANDLE_EXAMPLE,
          sessionId: EXAMPLE.branchId,
          lastEventId: 0,
          eventEpoch: EXAMPLE.eventEpoch,
          displayName: 'try the other fix',
          forkedFrom: { sessionId: EXAMPLE.sessionId },
        },
      },
      400: badInput(['invalid_body', 'invalid_branch_name', 'invalid_client_id']),
      404: SESSION_NOT_FOUND,
      409: { description: '`branch_while_prompt_active`.', schema: ErrorBody },
      503: overloaded(['session_limit_exceeded', 'daemon_draining']),
    },
  },
  {
    handler:
      ({ sessions }) =>
      async (request, reply) => {
        const { name } = parseBody(BranchBody, request, explainBranch);
        const { id } = request.params;
        registeredClientIdOf(sessions, request, id);
        assertAdmitting(sessions);
        const branched = await sessions.branchSession(id, {
          ...(name === undefined || name === null ? {} : { name }),
        });
        return reply.code(201).send(branchAnswer(sessions, branched));
      },
  },
);

function branchAnswer(
  sessions: SessionBridge,
  branched: Awaited<ReturnType<SessionBridge['branchSession']>>,
): Record<string, unknown> {
  const { lastEventId, eventEpoch } = sessions.streams.position(branched.sessionId);
  return {
    sessionId: branched.sessionId,
    workspaceCwd: branched.workspaceCwd,
    attached: false,
    clientId: branched.clientId,
    createdAt: new Date(branched.createdAt).toISOString(),
    lastEventId,
    eventEpoch,
    displayName: branched.displayName,
    forkedFrom: branched.forkedFrom,
  };
}

/** Session lifecycle routes of PROTOCOL §4 (create, load, resume, close) and branching of §7. */
export const SESSION_ROUTES: readonly Route[] = [
  createSession,
  restoreSession('load'),
  restoreSession('resume'),
  closeSession,
  branchSession,
];
