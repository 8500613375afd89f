import type { PromptAccepted, PromptBody, PromptQueueFullBody, PromptResult } from '@sluice/protocol';
import { anySignal, sleep } from './abort.js';
import { PROMPT_POST_RETRY_BASE_MS } from './defaults.js';
import { DaemonPendingPromptLimitError, DaemonProtocolError } from './errors.js';
import { errorFrom, readJson, sessionPath, type HttpCore } from './http.js';

/** What a prompt POST gave: the 202 envelope or a blocking daemon's result. */
export type Admission = { accepted: PromptAccepted } | { result: PromptResult };

/** A prompt request body as the SDK sends it (blocks typed as loosely as the reference's). */
export interface PromptRequest extends Omit<PromptBody, 'prompt'> {
  prompt: Array<PromptBody['prompt'][number] | Record<string, unknown>>;
}

function isAccepted(value: unknown): value is PromptAccepted {
  const body = value as Partial<PromptAccepted> | null;
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof body.promptId === 'string' &&
    Number.isSafeInteger(body.lastEventId) &&
    (body.lastEventId as number) >= 0
  );
}

const LABEL = 'POST /session/:id/prompt';

/**
 * `POST /session/:id/prompt` (PROTOCOL §5): the `202` envelope or a blocking daemon's result;
 * never under the short-request timeout, since a blocking turn takes minutes. Every POST
 * carries a fresh `Idempotency-Key`; when the connection fails before the answer was read, the
 * same request is sent again with the same key (the daemon answers it with the first `202`,
 * admitting nothing twice), up to the client's `promptRetries` times.
 */
export async function postPrompt(
  core: HttpCore,
  sessionId: string,
  request: PromptRequest,
  clientId: string | undefined,
  signal: AbortSignal | undefined,
): Promise<Admission> {
  const key = newIdempotencyKey();
  for (let attempt = 0; ; attempt++) {
    try {
      return await postOnce(core, sessionId, request, clientId, signal, key);
    } catch (error) {
      if (signal?.aborted || attempt >= core.promptRetries || !isConnectionFailure(error)) throw error;
      await sleep(PROMPT_POST_RETRY_BASE_MS * 2 ** attempt, signal);
    }
  }
}

/**
 * A key unique to one prompt: a UUID where Web Crypto is available (Node, secure browser pages),
 * else random base-36 digits — the key needs to be unique, not secret.
 */
function newIdempotencyKey(): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (typeof crypto?.randomUUID === 'function') return crypto.randomUUID();
  let key = Date.now().toString(36);
  while (key.length < 36) key += Math.random().toString(36).slice(2);
  return key.slice(0, 36);
}

/** A failure of the connection itself (fetch's `TypeError`), not an answer of the daemon. */
function isConnectionFailure(error: unknown): boolean {
  return error instanceof TypeError;
}

async function postOnce(
  core: HttpCore,
  sessionId: string,
  request: PromptRequest,
  clientId: string | undefined,
  signal: AbortSignal | undefined,
  key: string,
): Promise<Admission> {
  const label = LABEL;
  const response = await core.send('POST', sessionPath(sessionId, '/prompt'), {
    body: request,
    clientId,
    headers: { 'Idempotency-Key': key },
    signal: anySignal([signal]),
    timeout: false,
  });
  if (response.status === 202) {
    const body = await readJson<unknown>(response, label);
    if (!isAccepted(body))
      throw new DaemonProtocolError(`${label}: the 202 body has no promptId/lastEventId`);
    return { accepted: body };
  }
  if (response.ok) {
    const body = await readJson<PromptResult>(response, label);
    if (typeof body !== 'object' || body === null || typeof body.stopReason !== 'string')
      throw new DaemonProtocolError(`${label}: the ${response.status} body has no stopReason`);
    return { result: body };
  }
  const error = await errorFrom(response, label);
  if (error.status === 503 && error.code === 'prompt_queue_full') {
    const body = error.body as Partial<PromptQueueFullBody>;
    throw new DaemonPendingPromptLimitError(
      typeof body.sessionId === 'string' ? body.sessionId : sessionId,
      typeof body.limit === 'number' ? body.limit : NaN,
      typeof body.pendingCount === 'number' ? body.pendingCount : NaN,
      { local: false, ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }) },
    );
  }
  throw error;
}
