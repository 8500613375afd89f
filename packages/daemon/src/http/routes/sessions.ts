import { isAbsolute } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Daemon } from '../../daemon.js';
import { withOpenPermissions } from '../../permissions/index.js';
import { InvalidCwdError, InvalidSessionScopeError } from '../../sessions/errors.js';
import type { SessionScope } from '../../sessions/session-store.js';
import { HttpError } from '../http-error.js';
import { withWireTimes } from '../wire-time.js';
import {
  assertAdmitting,
  busOf,
  clientIdOf,
  objectBody,
  registeredClientIdOf,
  type SessionParams,
} from '../request-helpers.js';

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 1000;

function optionalString(body: Record<string, unknown>, key: string): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new HttpError(400, `invalid_${key}`, `${key} must be a string`);
  return value;
}

/** Session lifecycle routes of PROTOCOL §4 and branching of §7. */
export function sessionRoutes(app: FastifyInstance, daemon: Daemon): void {
  const { bridge } = daemon;

  app.post('/session', async (request) => {
    const body = objectBody(request);
    const scope = body['sessionScope'];
    if (scope !== undefined && scope !== 'single' && scope !== 'thread')
      throw new InvalidSessionScopeError(scope);
    const cwd = body['cwd'];
    if (cwd !== undefined && (typeof cwd !== 'string' || !isAbsolute(cwd))) throw new InvalidCwdError(cwd);
    const sessionId = optionalString(body, 'sessionId');
    const clientId = clientIdOf(request);
    assertAdmitting(daemon);
    return withWireTimes(
      bridge.createSession({
        ...(cwd === undefined ? {} : { cwd }),
        ...(scope === undefined ? {} : { scope: scope as SessionScope }),
        ...(sessionId === undefined ? {} : { sessionId: sessionId.toLowerCase() }),
        ...(clientId === undefined ? {} : { clientId }),
      }),
    );
  });

  for (const mode of ['load', 'resume'] as const) {
    app.post<{ Params: SessionParams }>(`/session/:id/${mode}`, async (request) => {
      objectBody(request);
      const clientId = clientIdOf(request);
      assertAdmitting(daemon);
      const handle = await bridge.restoreSession(request.params.id, {
        mode,
        ...(clientId === undefined || mode === 'resume' ? {} : { clientId }),
      });
      const bus = busOf(daemon, handle.sessionId);
      return { ...withWireTimes(handle), lastEventId: bus.lastEventId, eventEpoch: bus.epoch };
    });
  }

  app.get<{ Params: SessionParams }>('/session/:id/status', async (request) => {
    clientIdOf(request);
    return withWireTimes(withOpenPermissions(bridge.status(request.params.id), daemon.permissions));
  });

  app.get<{ Params: { cwd: string }; Querystring: { size?: string; cursor?: string } }>(
    '/workspace/:cwd/sessions',
    async (request) => {
      const { cwd } = request.params;
      if (!isAbsolute(cwd)) throw new InvalidCwdError(cwd);
      const size = parseIndex(request.query.size, 'size', DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE);
      const start = parseIndex(request.query.cursor, 'cursor', 0, 0, Number.MAX_SAFE_INTEGER);
      const all = bridge.listSessions(cwd);
      const sessions = all
        .slice(start, start + size)
        .map((summary) => withWireTimes(withOpenPermissions(summary, daemon.permissions)));
      const next = start + sessions.length;
      return next < all.length ? { sessions, nextCursor: String(next) } : { sessions };
    },
  );

  app.delete<{ Params: SessionParams }>('/session/:id', async (request, reply) => {
    const { id } = request.params;
    const clientId = clientIdOf(request);
    void bridge.closeSession(id, { reason: 'client_close', ...(clientId === undefined ? {} : { clientId }) });
    return reply.code(204).send();
  });

  app.post<{ Params: SessionParams }>('/session/:id/detach', async (request, reply) => {
    const clientId = clientIdOf(request);
    if (clientId === undefined)
      throw new HttpError(400, 'invalid_client_id', 'X-Qwen-Client-Id header is required to detach', {
        sessionId: request.params.id,
      });
    bridge.detachClient(request.params.id, clientId);
    return reply.code(204).send();
  });

  app.post<{ Params: SessionParams }>('/session/:id/heartbeat', async (request) => {
    return bridge.heartbeat(request.params.id, clientIdOf(request));
  });

  app.post<{ Params: SessionParams }>('/session/:id/branch', async (request, reply) => {
    const body = objectBody(request);
    const { id } = request.params;
    registeredClientIdOf(daemon, request, id);
    assertAdmitting(daemon);
    const name = body['name'];
    const branched = await bridge.branchSession(id, {
      ...(name === undefined || name === null ? {} : { name: name as string }),
    });
    const bus = daemon.buses.busFor(branched.sessionId);
    return reply.code(201).send({
      sessionId: branched.sessionId,
      workspaceCwd: branched.workspaceCwd,
      attached: false,
      clientId: branched.clientId,
      createdAt: new Date(branched.createdAt).toISOString(),
      lastEventId: bus.lastEventId,
      eventEpoch: bus.epoch,
      displayName: branched.displayName,
      forkedFrom: branched.forkedFrom,
    });
  });
}

function parseIndex(
  raw: string | undefined,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  if (raw === undefined || raw === '') return fallback;
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max)
    throw new HttpError(
      400,
      `invalid_${name}`,
      `${name} must be an integer in [${min}, ${max}], got ${JSON.stringify(raw)}`,
    );
  return value;
}
