import type { FastifyReply, FastifyRequest } from 'fastify';

/** Where request lines go: the daemon's log at `debug`, in pino's calling convention. */
export interface RequestLog {
  debug(fields: Record<string, unknown>, message: string): void;
}

/**
 * The `onResponse` hook that writes one line per answered request: method, route pattern
 * (`/session/:id/prompt`, never the URL, so no query string reaches the log), status, duration
 * and the session id of a session route. Never a body or a header. Registered only when the
 * log is at `debug`: fastify times a request only when such a hook exists, so the default
 * path pays nothing.
 */
export function requestLogHook(log: RequestLog) {
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const route = request.routeOptions.url;
    const fields: Record<string, unknown> = {
      method: request.method,
      // An unknown path is not logged: it is whatever the client sent.
      route: route ?? null,
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
    };
    const sessionId = route?.startsWith('/session/:id') ? (request.params as { id?: unknown }).id : undefined;
    if (typeof sessionId === 'string') fields['sessionId'] = sessionId;
    log.debug(fields, 'request');
    done();
  };
}
