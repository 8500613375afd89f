import * as z from 'zod/mini';
import { ClientIdHeader, EmptyObject, ErrorBody, SessionIdParams } from '../schemas/common-schemas.js';
import { EventEnvelope, EventEpochHeader, EventsQuery, LastEventIdHeader } from '../schemas/event-schemas.js';
import { VoteBody, VoteParams } from '../schemas/permission-schemas.js';
import {
  IdempotencyKeyHeader,
  PendingPrompts,
  PromptAccepted,
  PromptBody,
  PromptParams,
  PromptRemoved,
} from '../schemas/prompt-schemas.js';
import { SESSION_NOT_FOUND, badInput, overloaded, type RouteDoc } from './route-doc.js';

const clientId = { 'X-Qwen-Client-Id': { schema: ClientIdHeader } };

/** The prompt routes of PROTOCOL §5, the event stream of §6 and the votes of §7. */
export const PROMPT_ROUTES: readonly RouteDoc[] = [
  {
    method: 'POST',
    path: '/session/:id/prompt',
    tag: 'prompts',
    summary: 'Admit a prompt to the session (non-blocking)',
    description:
      'Admission is synchronous: `202` once admitted, or `503 prompt_queue_full` with ' +
      '`Retry-After: 5` and nothing queued (SPEC BP-8). The prompt ends with exactly one ' +
      '`turn_complete` or `turn_error` on the event stream, carrying its `promptId`.',
    params: SessionIdParams,
    headers: { ...clientId, 'Idempotency-Key': { schema: IdempotencyKeyHeader } },
    body: { schema: PromptBody, required: true },
    responses: {
      202: { description: 'Admitted.', schema: PromptAccepted },
      400: badInput([
        'invalid_body',
        'invalid_prompt',
        'invalid_deadline_ms',
        'invalid_client_id',
        'invalid_idempotency_key',
      ]),
      404: SESSION_NOT_FOUND,
      422: { description: '`idempotency_key_reused` with another body.', schema: ErrorBody },
      503: overloaded(['prompt_queue_full']),
    },
  },
  {
    method: 'GET',
    path: '/session/:id/pending-prompts',
    tag: 'prompts',
    summary: 'The running and queued prompts of a session',
    params: SessionIdParams,
    headers: clientId,
    responses: {
      200: { description: 'Running first.', schema: PendingPrompts },
      400: badInput(['invalid_client_id']),
      404: SESSION_NOT_FOUND,
    },
  },
  {
    method: 'DELETE',
    path: '/session/:id/pending-prompts/:promptId',
    tag: 'prompts',
    summary: 'Remove a queued prompt, or abort the running one',
    params: PromptParams,
    headers: clientId,
    responses: {
      200: { description: 'Whether a prompt was removed.', schema: PromptRemoved },
      400: badInput(['invalid_client_id']),
      404: SESSION_NOT_FOUND,
    },
  },
  {
    method: 'POST',
    path: '/session/:id/cancel',
    tag: 'prompts',
    summary: 'Cancel the running prompt (queued ones stay)',
    params: SessionIdParams,
    headers: clientId,
    responses: {
      204: { description: 'Done; no body.' },
      400: badInput(['invalid_client_id']),
      404: SESSION_NOT_FOUND,
    },
  },
  {
    method: 'GET',
    path: '/session/:id/events',
    tag: 'events',
    summary: "The session's event stream (SSE), with replay",
    description:
      'A server-sent event stream, not JSON: headers `X-Qwen-Event-Epoch` and `X-Qwen-SSE-Stream-Id`, ' +
      'first bytes `retry: 3000`, then the events (PROTOCOL §6).',
    params: SessionIdParams,
    query: EventsQuery,
    headers: {
      ...clientId,
      'Last-Event-ID': { schema: LastEventIdHeader },
      'X-Qwen-Event-Epoch': { schema: EventEpochHeader },
    },
    responses: {
      200: { description: 'The stream.', schema: EventEnvelope, contentType: 'text/event-stream' },
      400: badInput(['invalid_max_queued', 'invalid_last_event_id', 'invalid_client_id']),
      404: SESSION_NOT_FOUND,
      429: { description: '`subscriber_limit_exceeded`.', schema: ErrorBody },
    },
  },
  ...[true, false].map((onSession): RouteDoc => ({
    method: 'POST',
    path: onSession ? '/session/:id/permission/:requestId' : '/permission/:requestId',
    tag: 'permissions',
    summary: onSession ? "Vote on a session's permission request" : 'Vote on a permission request',
    params: onSession ? z.object({ ...SessionIdParams.shape, ...VoteParams.shape }) : VoteParams,
    headers: clientId,
    body: { schema: VoteBody, required: true },
    responses: {
      200: { description: 'The vote counted (the first responder wins).', schema: EmptyObject },
      400: badInput(['invalid_body', 'invalid_permission_outcome', 'invalid_option_id', 'invalid_client_id']),
      404: {
        description: 'No open request with that id (unknown, or already resolved), or no such session.',
        schema: ErrorBody,
      },
    },
  })),
];
