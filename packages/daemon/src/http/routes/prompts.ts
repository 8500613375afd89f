import { createHash } from 'node:crypto';
import { MAX_TIMER_MS } from '@sluice/runtime';
import type { FastifyInstance } from 'fastify';
import {
  InvalidDeadlineError,
  InvalidIdempotencyKeyError,
  InvalidPromptError,
  MAX_IDEMPOTENCY_KEY_CHARS,
  PromptQueueFullError,
  type ContentBlock,
  type SessionBridge,
} from '../../sessions/index.js';
import { parseBudgetId, type DurableBudgets } from '../../budgets/index.js';
import { JSON_CONTENT_TYPE, preparedError } from '../prepared-error.js';
import { clientIdOf, objectBody, registeredClientIdOf, type SessionParams } from '../request-helpers.js';

/** String fields of the ACP content blocks (schema of `@agentclientprotocol/sdk` 2.4). */
const REQUIRED_STRINGS: Partial<Record<string, readonly string[]>> = {
  text: ['text'],
  image: ['data', 'mimeType'],
  audio: ['data', 'mimeType'],
  resource_link: ['uri', 'name'],
};

function validatePrompt(prompt: unknown): readonly ContentBlock[] {
  if (!Array.isArray(prompt)) throw new InvalidPromptError(`got ${prompt === null ? 'null' : typeof prompt}`);
  if (prompt.length === 0) throw new InvalidPromptError('got an empty array');
  prompt.forEach((block: unknown, index) => {
    if (typeof block !== 'object' || block === null || Array.isArray(block))
      throw new InvalidPromptError(`block ${index} is not an object`);
    const { type } = block as { type?: unknown };
    if (typeof type !== 'string') throw new InvalidPromptError(`block ${index} has no string "type"`);
    // The fields ACP requires of the block types it defines; other types pass through.
    for (const field of REQUIRED_STRINGS[type] ?? [])
      if (typeof (block as Record<string, unknown>)[field] !== 'string')
        throw new InvalidPromptError(`block ${index} (${type}) needs a string "${field}"`);
    if (type === 'resource') {
      const { resource } = block as { resource?: { uri?: unknown } };
      if (typeof resource !== 'object' || resource === null || typeof resource.uri !== 'string')
        throw new InvalidPromptError(`block ${index} (resource) needs a "resource" with a string "uri"`);
    }
  });
  return prompt as ContentBlock[];
}

function validateDeadline(deadlineMs: unknown): number | undefined {
  if (deadlineMs === undefined || deadlineMs === null) return undefined;
  if (
    typeof deadlineMs !== 'number' ||
    !Number.isInteger(deadlineMs) ||
    deadlineMs < 1 ||
    deadlineMs > MAX_TIMER_MS
  )
    throw new InvalidDeadlineError(deadlineMs, MAX_TIMER_MS);
  return deadlineMs;
}

/** Printable ASCII, no spaces at the ends: what a UUID or any sane key is. */
const IDEMPOTENCY_KEY = new RegExp(
  `^[\\x21-\\x7e](?:[\\x20-\\x7e]{0,${MAX_IDEMPOTENCY_KEY_CHARS - 2}}[\\x21-\\x7e])?$`,
);

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

/** Prompt admission and the pending-prompt routes of PROTOCOL §5. */
export function promptRoutes(app: FastifyInstance, sessions: SessionBridge, budgets?: DurableBudgets): void {
  // Synchronous on purpose: under overload this route answers 503 at the rate of a bare server,
  // so the refusal skips the promise wrapper, fastify's error path and a throw, and sends the
  // bytes prepared for the (reused) refusal instead of serializing them again (SPEC BP-8).
  const budgetRead = new WeakSet<object>();
  app.post<{ Params: SessionParams }>('/session/:id/prompt', function admit(request, reply): unknown {
    const body = objectBody(request);
    const prompt = validatePrompt(body['prompt']);
    const deadlineMs = validateDeadline(body['deadlineMs']);
    const budgetId = parseBudgetId(body['budgetId'], 'budgetId');
    // An unknown budget is a 404 before any 202 (issue 21): one not open here is read first.
    if (budgetId !== undefined && budgets?.isOpen(budgetId) === false && !budgetRead.has(request)) {
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
  });

  app.get<{ Params: SessionParams }>('/session/:id/pending-prompts', async (request) => {
    clientIdOf(request);
    return { pendingPrompts: sessions.pendingPrompts(request.params.id) };
  });

  app.delete<{ Params: SessionParams & { promptId: string } }>(
    '/session/:id/pending-prompts/:promptId',
    async (request) => {
      const { id, promptId } = request.params;
      registeredClientIdOf(sessions, request, id);
      return { removed: sessions.removePendingPrompt(id, promptId) };
    },
  );

  app.post<{ Params: SessionParams }>('/session/:id/cancel', async (request, reply) => {
    const { id } = request.params;
    registeredClientIdOf(sessions, request, id);
    sessions.cancel(id);
    return reply.code(204).send();
  });
}
