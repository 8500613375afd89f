import { CodedError } from '@sluice/protocol';
import type { FastifyInstance } from 'fastify';
import { withOpenPermissions, type PermissionBroker } from '../../permissions/index.js';
import type { SessionBridge } from '../../sessions/index.js';
import { withWireTimes } from '../wire-time.js';
import { assertAdmitting, clientIdOf, registeredClientIdOf, type SessionParams } from '../request-helpers.js';
import { parseInput } from '../schemas/parse-input.js';
import { parseBody } from '../schemas/request-body.js';
import {
  BranchBody,
  CreateSessionBody,
  DeleteSessionQuery,
  RestoreSessionBody,
  SessionListQuery,
  explainBranch,
  explainCreateSession,
  explainDeleteSessionQuery,
  explainRestoreSession,
  explainSessionListQuery,
} from '../schemas/session-schemas.js';

/** Session lifecycle routes of PROTOCOL §4 (create, load, resume, close) and branching of §7. */
export function sessionRoutes(app: FastifyInstance, sessions: SessionBridge): void {
  app.post('/session', async (request) => {
    const {
      sessionScope: scope,
      cwd,
      sessionId,
      agent,
    } = parseBody(CreateSessionBody, request, explainCreateSession);
    const clientId = clientIdOf(request);
    assertAdmitting(sessions);
    return withWireTimes(
      await sessions.openSession({
        ...(cwd === undefined ? {} : { cwd }),
        ...(scope === undefined ? {} : { scope }),
        ...(sessionId === undefined || sessionId === null ? {} : { sessionId: sessionId.toLowerCase() }),
        ...(clientId === undefined ? {} : { clientId }),
        ...(agent === undefined || agent === null ? {} : { agent }),
      }),
    );
  });

  for (const mode of ['load', 'resume'] as const) {
    app.post<{ Params: SessionParams }>(`/session/:id/${mode}`, async (request) => {
      // `cwd` (the official client sends its workspace) must name the session's workspace.
      const { cwd } = parseBody(RestoreSessionBody, request, explainRestoreSession);
      const clientId = clientIdOf(request);
      assertAdmitting(sessions);
      const handle = await sessions.restoreSession(request.params.id, {
        mode,
        ...(clientId === undefined || mode === 'resume' ? {} : { clientId }),
        ...(cwd === undefined ? {} : { cwd }),
      });
      const bus = sessions.eventStream(handle.sessionId);
      return { ...withWireTimes(handle), lastEventId: bus.lastEventId, eventEpoch: bus.epoch };
    });
  }

  app.delete<{ Params: SessionParams; Querystring: Record<string, unknown> }>(
    '/session/:id',
    async (request, reply) => {
      const { purge } = parseInput(DeleteSessionQuery, request.query, explainDeleteSessionQuery);
      const { id } = request.params;
      const clientId = clientIdOf(request);
      // `?purge=true` also deletes the stored session and its history (sessions layer).
      if (purge === 'true') return reply.code(204).send(await sessions.purgeSession(id, clientId));
      void sessions.closeSession(id, {
        reason: 'client_close',
        ...(clientId === undefined ? {} : { clientId }),
      });
      return reply.code(204).send();
    },
  );

  app.post<{ Params: SessionParams }>('/session/:id/branch', async (request, reply) => {
    const { name } = parseBody(BranchBody, request, explainBranch);
    const { id } = request.params;
    registeredClientIdOf(sessions, request, id);
    assertAdmitting(sessions);
    const branched = await sessions.branchSession(id, {
      ...(name === undefined || name === null ? {} : { name }),
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
  app.get<{ Params: { cwd: string }; Querystring: Record<string, unknown> }>(
    '/workspace/:cwd/sessions',
    async (request) => {
      const query = parseInput(SessionListQuery, request.query, explainSessionListQuery);
      const size = query.size === undefined || query.size === '' ? undefined : Number(query.size);
      const cursor = query.cursor;
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
      throw new CodedError('invalid_client_id', 'X-Qwen-Client-Id header is required to detach', {
        sessionId: request.params.id,
      });
    sessions.detachClient(request.params.id, clientId);
    return reply.code(204).send();
  });

  app.post<{ Params: SessionParams }>('/session/:id/heartbeat', async (request) => {
    return sessions.heartbeat(request.params.id, clientIdOf(request));
  });
}
