import type { FastifyRequest } from 'fastify';
import type { Daemon } from '../daemon.js';
import type { EventBus } from '../events/index.js';
import { assertClientIdFormat } from '../sessions/clients.js';
import { InvalidClientIdError } from '../sessions/errors.js';
import { HttpError, drainingError } from './http-error.js';

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
  daemon: Daemon,
  request: FastifyRequest,
  sessionId: string,
): string | undefined {
  const clientId = clientIdOf(request);
  if (clientId !== undefined && !daemon.bridge.hasClient(sessionId, clientId))
    throw new InvalidClientIdError(clientId, sessionId);
  return clientId;
}

/** The live session's event bus; throws `session_not_found` / `session_closing` otherwise. */
export function busOf(daemon: Daemon, sessionId: string): EventBus {
  daemon.bridge.status(sessionId);
  return daemon.buses.busFor(sessionId);
}

/**
 * The bus to stream from: the live session's, or for a session closed moments ago its closed
 * bus, which replays what the client missed and then ends the stream (PROTOCOL §6).
 */
export function replayableBusOf(daemon: Daemon, sessionId: string): EventBus {
  try {
    return busOf(daemon, sessionId);
  } catch (error) {
    const closed = daemon.buses.closedBus(sessionId);
    if (closed === undefined) throw error;
    return closed;
  }
}

/** The request body as a plain object (absent → `{}`); anything else is a 400. */
export function objectBody(request: FastifyRequest): Record<string, unknown> {
  const body = request.body;
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body))
    throw new HttpError(400, 'invalid_body', 'Request body must be a JSON object');
  return body as Record<string, unknown>;
}

/** Refuses new work while the daemon drains. */
export function assertAdmitting(daemon: Daemon): void {
  if (daemon.draining) throw drainingError();
}

/** `:id` of a session route. */
export interface SessionParams {
  id: string;
}
