import * as z from 'zod/mini';
import { clientIdOf, type SessionParams } from '../request-helpers.js';
import { badInput } from '../openapi/route-doc.js';
import { defineRoute, type Route } from '../route.js';
import { EmptyObject, ErrorBody, SessionIdParams } from '../schemas/common-schemas.js';
import { VoteBody, VoteParams, explainVote } from '../schemas/permission-schemas.js';
import { parseBody } from '../schemas/request-body.js';
import { CLIENT_ID } from './sessions.js';

/**
 * A permission vote of PROTOCOL §7, first responder wins: `POST /session/:id/permission/:requestId`
 * and the session-less `POST /permission/:requestId`. Body `{outcome:{outcome:"selected",optionId}}`
 * or `{outcome:{outcome:"cancelled"}}` → `200 {}`.
 */
function vote(onSession: boolean): Route {
  return defineRoute<Partial<SessionParams> & { requestId: string }>(
    {
      method: 'POST',
      path: onSession ? '/session/:id/permission/:requestId' : '/permission/:requestId',
      tag: 'permissions',
      summary: onSession ? "Vote on a session's permission request" : 'Vote on a permission request',
      description: onSession
        ? 'Answers the `permission_request` event of the session with one of its `options` (`selected` + `optionId`) or `cancelled`. The first vote decides; later ones get `404` once it is resolved.'
        : 'As the session route, for a client that knows only the `requestId` (request ids are unique across sessions).',
      params: onSession ? z.object({ ...SessionIdParams.shape, ...VoteParams.shape }) : VoteParams,
      headers: CLIENT_ID,
      body: {
        schema: VoteBody,
        required: true,
        example: { outcome: { outcome: 'selected', optionId: 'proceed_once' } },
      },
      responses: {
        200: {
          description: 'The vote counted (the first responder wins).',
          schema: EmptyObject,
          example: {},
        },
        400: badInput([
          'invalid_body',
          'invalid_permission_outcome',
          'invalid_option_id',
          'invalid_client_id',
        ]),
        404: {
          description: 'No open request with that id (unknown, or already resolved), or no such session.',
          schema: ErrorBody,
        },
      },
    },
    {
      handler:
        ({ sessions, permissions }) =>
        async (request) => {
          const { outcome } = parseBody(VoteBody, request, explainVote);
          const { id, requestId } = request.params;
          const clientId = clientIdOf(request);
          if (id !== undefined) sessions.status(id);
          permissions.vote(requestId, outcome, {
            ...(id === undefined ? {} : { sessionId: id }),
            ...(clientId === undefined ? {} : { clientId }),
          });
          return {};
        },
    },
  );
}

/** The permission votes of PROTOCOL §7. */
export const PERMISSION_ROUTES: readonly Route[] = [vote(true), vote(false)];
