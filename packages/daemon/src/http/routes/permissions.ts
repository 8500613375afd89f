import type { FastifyInstance } from 'fastify';
import type { PermissionBroker } from '../../permissions/index.js';
import type { SessionBridge } from '../../sessions/index.js';
import { clientIdOf, type SessionParams } from '../request-helpers.js';
import { VoteBody, explainVote } from '../schemas/permission-schemas.js';
import { parseBody } from '../schemas/request-body.js';

interface VoteParams {
  requestId: string;
}

/**
 * Permission votes of PROTOCOL §7, first responder wins: `POST /session/:id/permission/:requestId`
 * and the session-less `POST /permission/:requestId`. Body `{outcome:{outcome:"selected",optionId}}`
 * or `{outcome:{outcome:"cancelled"}}` → `200 {}`.
 */
export function permissionRoutes(
  app: FastifyInstance,
  sessions: SessionBridge,
  permissions: PermissionBroker,
): void {
  app.post<{ Params: SessionParams & VoteParams }>('/session/:id/permission/:requestId', async (request) => {
    const { outcome } = parseBody(VoteBody, request, explainVote);
    const { id, requestId } = request.params;
    const clientId = clientIdOf(request);
    sessions.status(id);
    permissions.vote(requestId, outcome, {
      sessionId: id,
      ...(clientId === undefined ? {} : { clientId }),
    });
    return {};
  });

  app.post<{ Params: VoteParams }>('/permission/:requestId', async (request) => {
    const { outcome } = parseBody(VoteBody, request, explainVote);
    const clientId = clientIdOf(request);
    permissions.vote(request.params.requestId, outcome, clientId === undefined ? {} : { clientId });
    return {};
  });
}
