import type { FastifyRequest } from 'fastify';
import { mapError } from '../wire/index.js';

/** A log for failures, in pino's calling convention (a pino logger is one). */
export interface FailureLog {
  error(fields: Record<string, unknown>, message: string): void;
}

/**
 * Logs `error` when it is internal — one that answers `500` without a stable code
 * (`internal_error` in the counters) — at `error`, with fastify's request id (`req-N`), the route
 * pattern and the error with its stack; never the URL, a header or the body, so no prompt text.
 * Errors with a code are not logged.
 */
export function logIfInternal(logger: FailureLog | undefined, request: FastifyRequest, error: unknown): void {
  if (logger === undefined) return;
  const mapped = mapError(error);
  if (mapped.statusCode >= 500 && mapped.body['code'] === undefined)
    logger.error(
      { err: error, requestId: request.id, route: request.routeOptions.url ?? null },
      'request failed',
    );
}
