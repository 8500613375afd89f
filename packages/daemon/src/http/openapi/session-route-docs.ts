import { ClientIdHeader, ErrorBody, SessionIdParams } from '../schemas/common-schemas.js';
import {
  BranchBody,
  BranchedSession,
  CreateSessionBody,
  DeleteSessionQuery,
  HeartbeatAnswer,
  RestoreSessionBody,
  RestoredSession,
  SessionHandle,
  SessionListPage,
  SessionListQuery,
  SessionSummary,
  WorkspaceParams,
} from '../schemas/session-schemas.js';
import { SESSION_NOT_FOUND, badInput, overloaded, type RouteDoc } from './route-doc.js';

const clientId = { 'X-Qwen-Client-Id': { schema: ClientIdHeader } };
const noContent = { description: 'Done; no body.' };

/** The session routes of PROTOCOL §4 and branching of §7. */
export const SESSION_ROUTES: readonly RouteDoc[] = [
  {
    method: 'POST',
    path: '/session',
    tag: 'sessions',
    summary: 'Create a session, or join the workspace session',
    description:
      'Scope `single` (default) coalesces onto one session per workspace (`attached: true` on a repeat ' +
      'call, with a new `clientId`); `thread` always creates. An external agent that cannot start ' +
      'answers `502 agent_unavailable`.',
    headers: clientId,
    body: { schema: CreateSessionBody, required: false },
    responses: {
      200: { description: 'The session.', schema: SessionHandle },
      400: badInput([
        'invalid_body',
        'invalid_session_scope',
        'invalid_cwd',
        'workspace_mismatch',
        'invalid_session_id',
        'unknown_agent',
        'invalid_client_id',
      ]),
      502: { description: '`agent_unavailable`: the agent could not start.', schema: ErrorBody },
      503: overloaded(['session_limit_exceeded', 'agent_pool_exhausted', 'daemon_draining']),
    },
  },
  ...(['load', 'resume'] as const).map((mode): RouteDoc => ({
    method: 'POST',
    path: `/session/:id/${mode}`,
    tag: 'sessions',
    summary:
      mode === 'load'
        ? 'Load a stored session, replaying its history on the event stream'
        : 'Resume a stored or live session with a fresh client id',
    params: SessionIdParams,
    headers: clientId,
    body: { schema: RestoreSessionBody, required: false },
    responses: {
      200: { description: 'The session and where its event stream stands.', schema: RestoredSession },
      400: badInput(['invalid_body', 'invalid_cwd', 'workspace_mismatch', 'invalid_client_id']),
      404: SESSION_NOT_FOUND,
      503: overloaded(['session_limit_exceeded', 'daemon_draining']),
    },
  })),
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
    headers: clientId,
    responses: {
      204: noContent,
      400: badInput(['invalid_client_id', 'invalid_purge']),
      404: SESSION_NOT_FOUND,
    },
  },
  {
    method: 'POST',
    path: '/session/:id/branch',
    tag: 'sessions',
    summary: 'Branch a session: a new session with a copy of the conversation',
    params: SessionIdParams,
    headers: clientId,
    body: { schema: BranchBody, required: false },
    responses: {
      201: { description: 'The new session.', schema: BranchedSession },
      400: badInput(['invalid_body', 'invalid_branch_name', 'invalid_client_id']),
      404: SESSION_NOT_FOUND,
      409: { description: '`branch_while_prompt_active`.', schema: ErrorBody },
      503: overloaded(['session_limit_exceeded', 'daemon_draining']),
    },
  },
  {
    method: 'GET',
    path: '/session/:id/status',
    tag: 'sessions',
    summary: "A live session's summary",
    params: SessionIdParams,
    headers: clientId,
    responses: {
      200: { description: 'The summary.', schema: SessionSummary },
      400: badInput(['invalid_client_id']),
      404: SESSION_NOT_FOUND,
    },
  },
  {
    method: 'GET',
    path: '/workspace/:cwd/sessions',
    tag: 'sessions',
    summary: "A page of a workspace's stored and live sessions, newest first",
    params: WorkspaceParams,
    query: SessionListQuery,
    responses: {
      200: { description: 'One page; follow `nextCursor` for the next.', schema: SessionListPage },
      400: badInput(['invalid_size', 'invalid_cursor', 'invalid_cwd', 'workspace_mismatch']),
    },
  },
  {
    method: 'POST',
    path: '/session/:id/detach',
    tag: 'sessions',
    summary: 'Leave a session (the client id header is required)',
    params: SessionIdParams,
    headers: { 'X-Qwen-Client-Id': { schema: ClientIdHeader, required: true } },
    responses: { 204: noContent, 400: badInput(['invalid_client_id']), 404: SESSION_NOT_FOUND },
  },
  {
    method: 'POST',
    path: '/session/:id/heartbeat',
    tag: 'sessions',
    summary: 'Say the client is still there',
    params: SessionIdParams,
    headers: clientId,
    responses: {
      200: { description: 'When the client was last seen.', schema: HeartbeatAnswer },
      400: badInput(['invalid_client_id']),
      404: SESSION_NOT_FOUND,
    },
  },
];
