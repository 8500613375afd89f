import type { OutgoingHttpHeaders } from 'node:http';
import { parseLastEventId } from '../../events/index.js';
import { SESSION_NOT_FOUND, badInput } from '../openapi/route-doc.js';
import { clientIdOf, type SessionParams } from '../request-helpers.js';
import { defineRoute, type Route } from '../route.js';
import { ErrorBody, SessionIdParams } from '../schemas/common-schemas.js';
import {
  EventEnvelope,
  EventEpochHeader,
  EventsQuery,
  LastEventIdHeader,
  explainEventsQuery,
} from '../schemas/event-schemas.js';
import { parseInput } from '../schemas/parse-input.js';
import { streamSubscription } from '../sse-stream.js';
import { CLIENT_ID } from './sessions.js';
import { EXAMPLE } from '../openapi/route-examples.js';

/** `GET /session/:id/events`: the session's SSE stream with replay (PROTOCOL §6). */
export const EVENT_ROUTES: readonly Route[] = [
  defineRoute<SessionParams>(
    {
      method: 'GET',
      path: '/session/:id/events',
      tag: 'events',
      rateLimit: 'exempt',
      summary: "The session's event stream (SSE), with replay",
      description:
        'A server-sent event stream, not JSON: headers `X-Qwen-Event-Epoch` and `X-Qwen-SSE-Stream-Id`, ' +
        'first bytes `retry: 3000`, then the events (PROTOCOL §6).',
      params: SessionIdParams,
      query: EventsQuery,
      headers: {
        ...CLIENT_ID,
        'Last-Event-ID': { schema: LastEventIdHeader },
        'X-Qwen-Event-Epoch': { schema: EventEpochHeader },
      },
      responses: {
        200: {
          description: 'The stream.',
          schema: EventEnvelope,
          contentType: 'text/event-stream',
          example: {
            id: 2,
            v: 1,
            type: 'session_update',
            data: {
              sessionUpdate: 'agent_message_chunk',
              content: { type: 'text', text: 'src/index.ts starts the server.' },
            },
            promptId: EXAMPLE.promptId,
            originatorClientId: EXAMPLE.clientId,
            _meta: { serverTimestamp: 1796313547512 },
          },
        },
        400: badInput(['invalid_max_queued', 'invalid_last_event_id', 'invalid_client_id']),
        404: SESSION_NOT_FOUND,
        429: { description: '`subscriber_limit_exceeded`.', schema: ErrorBody },
      },
    },
    {
      handler:
        ({ sessions, heartbeatMs }) =>
        async (request, reply) => {
          clientIdOf(request);
          const bus = sessions.replayableStream(request.params.id);
          const lastEventId = parseLastEventId(request.headers['last-event-id']);
          const epochHeader = request.headers['x-qwen-event-epoch'];
          const epoch = typeof epochHeader === 'string' && epochHeader.length > 0 ? epochHeader : undefined;
          const raw = parseInput(EventsQuery, request.query, explainEventsQuery).maxQueued;
          const maxQueued = raw === undefined ? undefined : Number(raw);
          // Subscribing can still fail (400/429) as an ordinary response; after it, the reply is ours.
          const subscription = bus.subscribe({
            ...(lastEventId === undefined ? {} : { lastEventId }),
            ...(epoch === undefined ? {} : { epoch }),
            ...(maxQueued === undefined ? {} : { maxQueued }),
          });
          reply.hijack();
          streamSubscription(request.raw, reply.raw, subscription, {
            epoch: bus.epoch,
            heartbeatMs,
            headers: reply.getHeaders() as OutgoingHttpHeaders,
          });
        },
    },
  ),
];
