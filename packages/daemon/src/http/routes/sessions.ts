import { isAbsolute } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Daemon } from '../../daemon.js';
import { withOpenPermissions } from '../../permissions/index.js';
import {
  InvalidCwdError,
  InvalidSessionCursorError,
  InvalidSessionScopeError,
} from '../../sessions/errors.js';
import { MAX_SESSION_LIST_SIZE } from '../../sessions/session-listing.js';
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

function optionalString(body: Record<string, unknown>, key: string, code: string): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new HttpError(400, code, `${key} must be a string`);
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
    const sessionId = optionalString(body, 'sessionId', 'invalid_session_id');
    const clientId = clientIdOf(request);
    assertAdmitting(daemon);
    return withWireTimes(
      await bridge.openSession({
        ...(cwd === undefined ? {} : { cwd }),
        ...(scope === undefined ? {} : { scope: scope as SessionScope }),
        ...(sessionId === undefined ? {} : { sessionId: sessionId.toLowerCase() }),
        ...(clientId === undefined ? {} : { clientId }),
      }),
    );
  });

  for (const mode of ['load', 'resume'] as const) {
    app.post<{ Params: SessionParams }>(`/session/:id/${mode}`, async (request) => {
      const body = objectBody(request);
      const clientId = clientIdOf(request);
      assertAdmitting(daemon);
      // `cwd` (the official client sends its workspace) must name the session's workspace.
      const cwd = body['cwd'];
      const handle = await bridge.restoreSession(request.params.id, {
        mode,
        ...(clientId === undefined || mode === 'resume' ? {} : { clientId }),
        ...(cwd === undefined ? {} : { cwd }),
      });
      const bus = busOf(daemon, handle.sessionId);
      return { ...withWireTimes(handle), lastEventId: bus.lastEventId, eventEpoch: bus.epoch };
    });
  }

  app.get<{ Params: SessionParams }>('/session/:id/status', async (request) => {
    clientIdOf(request);
    return withWireTimes(withOpenPermissions(bridge.status(request.params.id), daemon.permissions));
  });

  // Stored sessions too (PROTOCOL §4, as the reference daemon lists them), newest first.
  app.get<{ Params: { cwd: string }; Querystring: { size?: unknown; cursor?: unknown } }>(
    '/workspace/:cwd/sessions',
    async (request) => {
      const size = parseSize(request.query.size);
      const cursor = request.query.cursor;
      if (cursor !== undefined && typeof cursor !== 'string') throw new InvalidSessionCursorError(cursor);
      const page = await bridge.listWorkspaceSessions(request.params.cwd, {
        ...(size === undefined ? {} : { size }),
        ...(cursor === undefined || cursor === '' ? {} : { cursor }),
      });
      const sessions = page.sessions.map((summary) =>
        withWireTimes(withOpenPermissions(summary, daemon.permissions)),
      );
      return page.nextCursor === undefined ? { sessions } : { sessions, nextCursor: page.nextCursor };
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

function parseSize(raw: unknown): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const value = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_SESSION_LIST_SIZE)
    throw new HttpError(
      400,
      'invalid_size',
      `size must be an integer in [1, ${MAX_SESSION_LIST_SIZE}], got ${JSON.stringify(raw)}`,
    );
  return value;
}
