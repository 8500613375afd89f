import { createHash } from 'node:crypto';
import {
  InvalidIdempotencyKeyError,
  InvalidPromptError,
  MAX_IDEMPOTENCY_KEY_CHARS,
  PromptQueueFullError,
} from '../../sessions/index.js';
import { parseBudgetId } from '../../budgets/index.js';
import { JSON_CONTENT_TYPE, preparedError } from '../prepared-error.js';
import { clientIdOf, registeredClientIdOf, type SessionParams } from '../request-helpers.js';
import { SESSION_NOT_FOUND, badInput, overloaded } from '../openapi/route-doc.js';
import { defineRoute, type Route, type RouteHandler, type RouteParts } from '../route.js';
import { ErrorBody, SessionIdParams } from '../schemas/common-schemas.js';
import {
  IDEMPOTENCY_KEY,
  IdempotencyKeyHeader,
  PendingPrompts,
  PromptAccepted,
  PromptBody,
  PromptParams,
  PromptRemoved,
  readPromptBody,
} from '../schemas/prompt-schemas.js';
import { CLIENT_ID, NO_CONTENT } from './sessions.js';
import { EXAMPLE } from '../openapi/route-examples.js';

/**
 * The request's `Idempotency-Key` (issue 19 item 12) with a fingerprint of what it asks (the
 * prompt and its deadline); `undefined` without the header, so requests without one pay nothing.
 */
function idempotencyOf(
  header: string | string[] | undefined,
  prompt: unknown,
  deadlineMs: number | undefined,
  budgetId?: string,
): { key: string; fingerprint: string } | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !IDEMPOTENCY_KEY.test(header))
    throw new InvalidIdempotencyKeyError(header, MAX_IDEMPOTENCY_KEY_CHARS);
  let text: string;
  try {
    const asked = [prompt, deadlineMs ?? null];
    text = JSON.stringify(budgetId === undefined ? asked : [...asked, budgetId]);
  } catch {
    throw new InvalidPromptError('nests too deep to be compared with a retry');
  }
  return { key: header, fingerprint: createHash('sha256').update(text).digest('base64url') };
}

/**
 * The admission handler. Synchronous on purpose: under overload this route answers 503 at the
 * rate of a bare server, so the refusal skips the promise wrapper, fastify's error path and a
 * throw, and sends the bytes prepared for the (reused) refusal instead of serializing them again
 * (SPEC BP-8).
 */
function admission({ sessions, budgets }: RouteParts): RouteHandler<SessionParams, unknown> {
  const budgetRead = new WeakSet<object>();
  return function admit(request, reply): unknown {
    const { prompt, deadlineMs } = readPromptBody(request.body);
    const budgetId = parseBudgetId((request.body as { budgetId?: unknown }).budgetId, 'budgetId');
    // An unknown budget is a 404 before any 202 (issue 21): one not open here is read first.
    if (budgetId !== undefined && !budgets.isOpen(budgetId) && !budgetRead.has(request)) {
      budgetRead.add(request);
      return budgets.open(budgetId).then(() => admit.call(this, request, reply));
    }
    const clientId = clientIdOf(request);
    const idempotency = idempotencyOf(request.headers['idempotency-key'], prompt, deadlineMs, budgetId);
    // Absent fields are undefined, which the bridge reads as absent.
    const admission = sessions.trySendPrompt(request.params.id, prompt, {
      clientId,
      deadlineMs,
      idempotency,
      budgetId,
    });
    if (admission instanceof PromptQueueFullError) {
      const refusal = preparedError(admission);
      return reply
        .code(refusal.statusCode)
        .headers(refusal.headers)
        .type(JSON_CONTENT_TYPE)
        .send(refusal.body);
    }
    const { promptId, lastEventId, eventEpoch, recorded } = admission;
    // The 202 is a promise that survives kill -9: it waits for the admission ledger's commit
    // (one transaction per turn of the event loop, shared by every prompt accepted in it).
    const accepted = { promptId, lastEventId, eventEpoch };
    if (recorded === undefined) return reply.code(202).send(accepted);
    void recorded.then(() => reply.code(202).send(accepted));
    return reply;
  };
}

const sendPrompt = defineRoute<SessionParams, unknown>(
  {
    method: 'POST',
    path: '/session/:id/prompt',
    tag: 'prompts',
    rateLimit: 'prompt',
    summary: 'Admit a prompt to the session (non-blocking)',
    description:
      'Admission is synchronous: `202` once admitted, or `503 prompt_queue_full` with ' +
      '`Retry-After: 5` and nothing queued (SPEC BP-8). The prompt ends with exactly one ' +
      '`turn_complete` or `turn_error` on the event stream, carrying its `promptId`.',
    params: SessionIdParams,
    headers: { ...CLIENT_ID, 'Idempotency-Key': { schema: IdempotencyKeyHeader } },
    body: {
      schema: PromptBody,
      required: true,
      example: { prompt: [{ type: 'text', text: 'Explain what src/index.ts does.' }] },
    },
    responses: {
      202: {
        description: 'Admitted.',
        schema: PromptAccepted,
        example: { promptId: EXAMPLE.promptId, lastEventId: 1, eventEpoch: EXAMPLE.eventEpoch },
      },
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
  { handler: admission },
);

const pendingPrompts = defineRoute<SessionParams>(
  {
    method: 'GET',
    path: '/session/:id/pending-prompts',
    tag: 'prompts',
    summary: 'The running and queued prompts of a session',
    description:
      'The running prompt first, then the queue in admission order, each with its text, when it was queued (epoch milliseconds) and the client that sent it.',
    params: SessionIdParams,
    headers: CLIENT_ID,
    responses: {
      200: {
        description: 'Running first.',
        schema: PendingPrompts,
        example: {
          pendingPrompts: [
            {
              promptId: EXAMPLE.promptId,
              text: 'Explain what src/index.ts does.',
              queuedAt: 1796313547453,
              state: 'running',
              originatorClientId: EXAMPLE.clientId,
            },
          ],
        },
      },
      400: badInput(['invalid_client_id']),
      404: SESSION_NOT_FOUND,
    },
  },
  {
    handler:
      ({ sessions }) =>
      async (request) => {
        clientIdOf(request);
        return { pendingPrompts: sessions.pendingPrompts(request.params.id) };
      },
  },
);

const removePendingPrompt = defineRoute<SessionParams & { promptId: string }>(
  {
    method: 'DELETE',
    path: '/session/:id/pending-prompts/:promptId',
    tag: 'prompts',
    summary: 'Remove a queued prompt, or abort the running one',
    description:
      'A queued prompt leaves the queue; the running one is aborted (its turn ends with `turn_error`). `removed: false` when the prompt had already ended. The caller must be a client of the session.',
    params: PromptParams,
    headers: CLIENT_ID,
    responses: {
      200: {
        description: 'Whether a prompt was removed.',
        schema: PromptRemoved,
        example: { removed: true },
      },
      400: badInput(['invalid_client_id']),
      404: SESSION_NOT_FOUND,
    },
  },
  {
    handler:
      ({ sessions }) =>
      async (request) => {
        const { id, promptId } = request.params;
        registeredClientIdOf(sessions, request, id);
        return { removed: sessions.removePendingPrompt(id, promptId) };
      },
  },
);

const cancel = defineRoute<SessionParams>(
  {
    method: 'POST',
    path: '/session/:id/cancel',
    tag: 'prompts',
    summary: 'Cancel the running prompt (queued ones stay)',
    description:
      'Asks the agent to stop the running turn, which ends with its stop reason `cancelled`; the next queued prompt then starts. Nothing happens when no prompt runs.',
    params: SessionIdParams,
    headers: CLIENT_ID,
    responses: {
      204: NO_CONTENT,
      400: badInput(['invalid_client_id']),
      404: SESSION_NOT_FOUND,
    },
  },
  {
    handler:
      ({ sessions }) =>
      async (request, reply) => {
        const { id } = request.params;
        registeredClientIdOf(sessions, request, id);
        sessions.cancel(id);
        return reply.code(204).send();
      },
  },
);

/** Prompt admission and the pending-prompt routes of PROTOCOL §5. */
export const PROMPT_ROUTES: readonly Route[] = [sendPrompt, pendingPrompts, removePendingPrompt, cancel];
