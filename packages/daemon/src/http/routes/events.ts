import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { parseLastEventId } from '../../events/index.js';
import type { SessionBridge } from '../../sessions/index.js';
import { streamSubscription } from '../sse-stream.js';
import { clientIdOf, type SessionParams } from '../request-helpers.js';
import { EventsQuery, explainEventsQuery } from '../schemas/event-schemas.js';
import { parseInput } from '../schemas/parse-input.js';

/** `GET /session/:id/events`: the session's SSE stream with replay (PROTOCOL §6). */
export function eventRoutes(app: FastifyInstance, sessions: SessionBridge, heartbeatMs: number): void {
  app.get<{ Params: SessionParams; Querystring: Record<string, unknown> }>(
    '/session/:id/events',
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
  );
}
