import type { FastifyRequest } from 'fastify';
import {
  DaemonDrainingError,
  InvalidClientIdError,
  assertClientIdFormat,
  type SessionBridge,
} from '../sessions/index.js';

/** Header carrying the client identity (PROTOCOL §1). */
export const CLIENT_ID_HEADER = 'x-qwen-client-id';

/** The caller's `X-Qwen-Client-Id`, validated; `undefined` when absent. */
export function clientIdOf(request: FastifyRequest): string | undefined {
  const raw = request.headers[CLIENT_ID_HEADER];
  if (raw === undefined) return undefined;
  if (Array.isArray(raw)) throw new InvalidClientIdError(raw.join(','));
  assertClientIdFormat(raw);
  return raw;
}

/** Like {@link clientIdOf}, and the id must be registered on the session when given. */
export function registeredClientIdOf(
  sessions: SessionBridge,
  request: FastifyRequest,
  sessionId: string,
): string | undefined {
  const clientId = clientIdOf(request);
  if (clientId !== undefined && !sessions.hasClient(sessionId, clientId))
    throw new InvalidClientIdError(clientId, sessionId);
  return clientId;
}

/** Refuses new work while the daemon drains. */
export function assertAdmitting(sessions: SessionBridge): void {
  if (sessions.draining) throw new DaemonDrainingError();
}

/** `:id` of a session route. */
export interface SessionParams {
  id: string;
}
