import { describeValue } from '@sluice/protocol';
import { isAbsolute } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { withOpenPermissions, type PermissionBroker } from '../../permissions/index.js';
import {
  InvalidCwdError,
  InvalidSessionCursorError,
  InvalidSessionScopeError,
  MAX_SESSION_LIST_SIZE,
  type SessionBridge,
  type SessionScope,
} from '../../sessions/index.js';
import { HttpError } from '../../wire/index.js';
import { withWireTimes } from '../wire-time.js';
import {
  assertAdmitting,
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

/** Session lifecycle routes of PROTOCOL §4 (create, load, resume, close) and branching of §7. */
export function sessionRoutes(app: FastifyInstance, sessions: SessionBridge): void {
  app.post('/session', async (request) => {
    const body = objectBody(request);
    const scope = body['sessionScope'];
    if (scope !== undefined && scope !== 'single' && scope !== 'thread')
      throw new InvalidSessionScopeError(scope);
    const cwd = body['cwd'];
    if (cwd !== undefined && (typeof cwd !== 'string' || !isAbsolute(cwd))) throw new InvalidCwdError(cwd);
    const sessionId = optionalString(body, 'sessionId', 'invalid_session_id');
    const agent = optionalString(body, 'agent', 'unknown_agent');
    const clientId = clientIdOf(request);
    assertAdmitting(sessions);
    return withWireTimes(
      await sessions.openSession({
        ...(cwd === undefined ? {} : { cwd }),
        ...(scope === undefined ? {} : { scope: scope as SessionScope }),
        ...(sessionId === undefined ? {} : { sessionId: sessionId.toLowerCase() }),
        ...(clientId === undefined ? {} : { clientId }),
        ...(agent === undefined ? {} : { agent }),
      }),
    );
  });

  for (const mode of ['load', 'resume'] as const) {
    app.post<{ Params: SessionParams }>(`/session/:id/${mode}`, async (request) => {
      const body = objectBody(request);
      const clientId = clientIdOf(request);
      assertAdmitting(sessions);
      // `cwd` (the official client sends its workspace) must name the session's workspace.
      const cwd = body['cwd'];
      const handle = await sessions.restoreSession(request.params.id, {
        mode,
        ...(clientId === undefined || mode === 'resume' ? {} : { clientId }),
        ...(cwd === undefined ? {} : { cwd }),
      });
      const bus = sessions.eventStream(handle.sessionId);
      return { ...withWireTimes(handle), lastEventId: bus.lastEventId, eventEpoch: bus.epoch };
    });
  }

  app.delete<DeleteSession>('/session/:id', async (request, reply) => {
    const { id } = request.params;
    const clientId = clientIdOf(request);
    // `?purge=true` also deletes the stored session and its history (sessions layer).
    if (purgeFlag(request.query.purge))
      return reply.code(204).send(await sessions.purgeSession(id, clientId));
    void sessions.closeSession(id, {
      reason: 'client_close',
      ...(clientId === undefined ? {} : { clientId }),
    });
    return reply.code(204).send();
  });

  app.post<{ Params: SessionParams }>('/session/:id/branch', async (request, reply) => {
    const body = objectBody(request);
    const { id } = request.params;
    registeredClientIdOf(sessions, request, id);
    assertAdmitting(sessions);
    const name = body['name'];
    const branched = await sessions.branchSession(id, {
      ...(name === undefined || name === null ? {} : { name: name as string }),
    });
    const { lastEventId, eventEpoch } = sessions.streams.position(branched.sessionId);
    return reply.code(201).send({
      sessionId: branched.sessionId,
      workspaceCwd: branched.workspaceCwd,
      attached: false,
      clientId: branched.clientId,
      createdAt: new Date(branched.createdAt).toISOString(),
      lastEventId,
      eventEpoch,
      displayName: branched.displayName,
      forkedFrom: branched.forkedFrom,
    });
  });
}

/** Status and listing of PROTOCOL §4: one live session, or a workspace's live and stored ones. */
export function sessionListRoutes(
  app: FastifyInstance,
  sessions: SessionBridge,
  permissions: PermissionBroker,
): void {
  app.get<{ Params: SessionParams }>('/session/:id/status', async (request) => {
    clientIdOf(request);
    return withWireTimes(withOpenPermissions(sessions.status(request.params.id), permissions));
  });

  // Stored sessions too (PROTOCOL §4, as the reference daemon lists them), newest first.
  app.get<{ Params: { cwd: string }; Querystring: { size?: unknown; cursor?: unknown } }>(
    '/workspace/:cwd/sessions',
    async (request) => {
      const size = parseSize(request.query.size);
      const cursor = request.query.cursor;
      if (cursor !== undefined && typeof cursor !== 'string') throw new InvalidSessionCursorError(cursor);
      const page = await sessions.listWorkspaceSessions(request.params.cwd, {
        ...(size === undefined ? {} : { size }),
        ...(cursor === undefined || cursor === '' ? {} : { cursor }),
      });
      const listed = page.sessions.map((summary) => withWireTimes(withOpenPermissions(summary, permissions)));
      return page.nextCursor === undefined
        ? { sessions: listed }
        : { sessions: listed, nextCursor: page.nextCursor };
    },
  );
}

/** A client leaving a session, or saying it is still there (PROTOCOL §4). */
export function sessionClientRoutes(app: FastifyInstance, sessions: SessionBridge): void {
  app.post<{ Params: SessionParams }>('/session/:id/detach', async (request, reply) => {
    const clientId = clientIdOf(request);
    if (clientId === undefined)
      throw new HttpError(400, 'invalid_client_id', 'X-Qwen-Client-Id header is required to detach', {
        sessionId: request.params.id,
      });
    sessions.detachClient(request.params.id, clientId);
    return reply.code(204).send();
  });

  app.post<{ Params: SessionParams }>('/session/:id/heartbeat', async (request) => {
    return sessions.heartbeat(request.params.id, clientIdOf(request));
  });
}

/** `DELETE /session/:id[?purge=true]`. */
interface DeleteSession {
  Params: SessionParams;
  Querystring: { purge?: unknown };
}

function purgeFlag(raw: unknown): boolean {
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new HttpError(400, 'invalid_purge', `purge must be true or false, got ${describeValue(raw)}`);
}

function parseSize(raw: unknown): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const value = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_SESSION_LIST_SIZE)
    throw new HttpError(
      400,
      'invalid_size',
      `size must be an integer in [1, ${MAX_SESSION_LIST_SIZE}], got ${describeValue(raw)}`,
    );
  return value;
}
