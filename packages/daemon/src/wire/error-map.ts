import type { ModelErrorCode } from '@sluice/protocol';
import { ModelRuntimeError, OverloadedError, ProviderError } from '@sluice/runtime';
import { AgentError, type AgentErrorCode, type AgentUnavailableError } from '../agents/index.js';
import { EventBusError, type EventBusErrorCode } from '../events/index.js';
import {
  type InvalidClientIdError,
  type PromptQueueFullError,
  SessionError,
  type SessionLimitExceededError,
  type SessionNotFoundError,
  type SessionErrorCode,
} from '../sessions/index.js';
import { PermissionError, type PermissionErrorCode } from '../permissions/index.js';
import { HttpError } from './http-error.js';

/** What an error becomes on the wire. */
export interface MappedError {
  statusCode: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

type Body = (error: Error & { code: string }) => Record<string, unknown>;

const RETRY_AFTER = { 'Retry-After': '5' };
const plain: Body = (error) => ({ error: error.message, code: error.code });

/**
 * The one table from stable error codes to HTTP status, headers and body (PROTOCOL §1, §4–§6);
 * ACP derives its JSON-RPC errors from it (acp/rpc-errors.ts).
 */
const TABLE: Record<
  SessionErrorCode | EventBusErrorCode | PermissionErrorCode,
  { status: number; headers?: Record<string, string>; body?: Body }
> = {
  session_not_found: { status: 404, body: notFound },
  session_closing: { status: 404, body: notFound },
  session_closed: { status: 404, body: notFound },
  session_limit_exceeded: {
    status: 503,
    headers: RETRY_AFTER,
    body: (error) => {
      const e = error as SessionLimitExceededError;
      return { error: e.message, code: e.code, limit: e.limit, scope: e.scope };
    },
  },
  prompt_queue_full: {
    status: 503,
    headers: RETRY_AFTER,
    body: (error) => {
      const e = error as PromptQueueFullError;
      return {
        error: e.message,
        code: e.code,
        sessionId: e.sessionId,
        limit: e.limit,
        pendingCount: e.pendingCount,
      };
    },
  },
  prompt_aborted: { status: 400 },
  idempotency_key_reused: { status: 422 },
  invalid_idempotency_key: { status: 400 },
  prompt_deadline_exceeded: { status: 504 },
  branch_while_prompt_active: {
    status: 409,
    body: (error) => ({ ...plain(error), sessionId: (error as unknown as { sessionId: string }).sessionId }),
  },
  invalid_client_id: {
    status: 400,
    body: (error) => {
      const e = error as InvalidClientIdError;
      return e.sessionId === undefined
        ? plain(e)
        : { error: e.message, code: e.code, sessionId: e.sessionId, clientId: e.clientId };
    },
  },
  invalid_session_scope: { status: 400 },
  invalid_session_id: { status: 400 },
  invalid_prompt: { status: 400 },
  invalid_deadline_ms: { status: 400 },
  invalid_cwd: { status: 400 },
  workspace_mismatch: { status: 400 },
  session_workspace_conflict: {
    status: 409,
    body: (error) => {
      const e = error as unknown as { sessionId: string; workspaceCwd: string; liveWorkspaceCwd: string };
      return {
        ...plain(error),
        sessionId: e.sessionId,
        workspaceCwd: e.workspaceCwd,
        liveWorkspaceCwd: e.liveWorkspaceCwd,
      };
    },
  },
  session_id_conflict: {
    status: 409,
    body: (error) => {
      const e = error as unknown as { sessionId: string; workspaceCwd: string; conflict: string };
      return { ...plain(error), sessionId: e.sessionId, workspaceCwd: e.workspaceCwd, conflict: e.conflict };
    },
  },
  session_owned_elsewhere: {
    status: 409,
    body: (error) => {
      const e = error as unknown as { sessionId: string; owner: { nodeId: string; url?: string } };
      return { ...plain(error), sessionId: e.sessionId, owner: e.owner };
    },
  },
  invalid_cursor: { status: 400 },
  invalid_branch_name: { status: 400 },
  invalid_turn_result: { status: 500 },
  bridge_shutting_down: { status: 503, headers: RETRY_AFTER },
  daemon_shutting_down: { status: 503, headers: RETRY_AFTER },
  invalid_max_queued: { status: 400 },
  invalid_last_event_id: { status: 400 },
  subscriber_limit_exceeded: { status: 429, headers: RETRY_AFTER },
  event_not_serializable: { status: 500 },
  permission_request_not_found: {
    status: 404,
    body: (error) => ({ ...plain(error), requestId: (error as unknown as { requestId: string }).requestId }),
  },
  invalid_permission_outcome: { status: 400 },
  invalid_option_id: {
    status: 400,
    body: (error) => {
      const e = error as unknown as { requestId: string; optionId: string };
      return { ...plain(error), requestId: e.requestId, optionId: e.optionId };
    },
  },
  invalid_permission_request: { status: 500 },
  permission_limit_exceeded: { status: 503, headers: RETRY_AFTER },
  unknown_agent: {
    status: 400,
    body: (error) => ({ ...plain(error), known: (error as unknown as { known: string[] }).known }),
  },
};

/** A model call's admission is momentary: a client may try again almost at once. */
const MODEL_RETRY_AFTER = { 'Retry-After': '1' };

/**
 * The model runtime's errors as the model gateway (`/v1/*`) answers them; a provider error with
 * an upstream answer keeps the upstream's status instead (see {@link mapError}).
 */
const MODEL_TABLE: Record<ModelErrorCode, { status: number; headers?: Record<string, string> }> = {
  model_overloaded: { status: 429, headers: MODEL_RETRY_AFTER },
  request_too_large: { status: 413 },
  model_timeout: { status: 504 },
  model_queue_timeout: { status: 429, headers: MODEL_RETRY_AFTER },
  invalid_timeout: { status: 400 },
  budget_exhausted: { status: 429 },
  model_cancelled: { status: 499 },
  runtime_stopped: { status: 503, headers: RETRY_AFTER },
  model_recording_failed: { status: 503, headers: RETRY_AFTER },
  model_closure_failure: { status: 500 },
  model_provider_error: { status: 502 },
  // Only ever recorded at start-up for a call a killed daemon left; no live call fails with it.
  interrupted: { status: 500 },
};

/**
 * An external agent's errors: it cannot run sessions (`502`: the agent, not the request, is
 * at fault; the agent's own message is in `agentMessage`), or every process is busy (`503`).
 * Crash and stall codes end turns (`turn_error`) and reach HTTP only through ACP's table use.
 */
const AGENT_TABLE: Record<AgentErrorCode, { status: number; headers?: Record<string, string>; body?: Body }> =
  {
    agent_unavailable: {
      status: 502,
      body: (error) => {
        const e = error as unknown as AgentUnavailableError;
        return { ...plain(error), agent: e.agent, agentMessage: e.agentMessage };
      },
    },
    agent_pool_exhausted: {
      status: 503,
      headers: RETRY_AFTER,
      body: (error) => ({
        ...plain(error),
        maxProcesses: (error as unknown as { maxProcesses: number }).maxProcesses,
      }),
    },
    agent_crashed: { status: 502 },
    agent_unresponsive: { status: 504 },
    // issue 27 (new error code): no process can take another session within the memory budget
    agent_capacity: { status: 503, headers: RETRY_AFTER },
    agent_error: { status: 502 },
  };

function notFound(error: Error & { code: string }): Record<string, unknown> {
  const { sessionId } = error as SessionNotFoundError;
  // A not-found error may say more (stored but not loaded); closing and closed ones say this.
  const message = error.code === 'session_not_found' ? error.message : `No session with id "${sessionId}"`;
  return { error: message, code: error.code, sessionId };
}

/** Fastify's own errors: body size, content type, malformed JSON. */
const FASTIFY_CODES: Record<string, { status: number; message?: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, message: 'Request body is too large (limit 10 MB)' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, message: 'Unsupported Content-Type; send application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, message: 'Invalid Content-Length' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, message: 'Invalid JSON in request body' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, message: 'Invalid JSON in request body' },
};

/**
 * Maps any error to its response. Typed daemon errors go through {@link TABLE}; client
 * mistakes fastify detects keep their 4xx; anything else is a 500 without internals.
 */
export function mapError(error: unknown): MappedError {
  if (error instanceof HttpError) {
    const body: Record<string, unknown> = { error: error.message };
    if (error.code !== undefined) body['code'] = error.code;
    return { statusCode: error.statusCode, headers: error.headers, body: { ...body, ...error.details } };
  }
  if (error instanceof AgentError) {
    const entry = AGENT_TABLE[error.code];
    return { statusCode: entry.status, headers: entry.headers ?? {}, body: (entry.body ?? plain)(error) };
  }
  if (error instanceof SessionError || error instanceof EventBusError || error instanceof PermissionError) {
    const entry = TABLE[error.code];
    const typed = error as Error & { code: string };
    return { statusCode: entry.status, headers: entry.headers ?? {}, body: (entry.body ?? plain)(typed) };
  }
  if (error instanceof ModelRuntimeError) return mapModelError(error);
  const fields = typeof error === 'object' && error !== null ? (error as Record<string, unknown>) : {};
  const code = typeof fields['code'] === 'string' ? fields['code'] : undefined;
  const known = code === undefined ? undefined : FASTIFY_CODES[code];
  if (known) {
    return {
      statusCode: known.status,
      headers: {},
      body: { error: known.message ?? (error as Error).message },
    };
  }
  const status = fields['statusCode'];
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return { statusCode: status, headers: {}, body: { error: (error as Error).message } };
  }
  return { statusCode: 500, headers: {}, body: { error: 'Internal server error' } };
}

/**
 * A model runtime error: its {@link MODEL_TABLE} entry, or — for a provider error that carries
 * the upstream's answer — the upstream's status and `Retry-After`. The upstream's own error
 * object rides along as `upstream` for the gateway to relay; it is never logged.
 */
function mapModelError(error: ModelRuntimeError): MappedError {
  const entry = MODEL_TABLE[error.code];
  const body: Record<string, unknown> = { error: error.message, code: error.code };
  const upstream = error instanceof ProviderError ? error.upstream : undefined;
  if (error instanceof OverloadedError)
    return {
      statusCode: entry.status,
      headers: { 'Retry-After': String(Math.ceil(error.retryAfterMs / 1_000)) },
      body,
    };
  if (upstream === undefined) return { statusCode: entry.status, headers: entry.headers ?? {}, body };
  if (upstream.error !== undefined) body['upstream'] = upstream.error;
  const headers: Record<string, string> =
    upstream.retryAfter === undefined ? {} : { 'Retry-After': upstream.retryAfter };
  return { statusCode: upstream.status, headers, body };
}
