import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Daemon } from '../../daemon.js';
import {
  InvalidLastEventIdError,
  InvalidMaxQueuedError,
  MAX_MAX_QUEUED,
  MIN_MAX_QUEUED,
} from '../../events/index.js';
import { streamSubscription } from '../sse-stream.js';
import { replayableBusOf, clientIdOf, type SessionParams } from '../request-helpers.js';

/** `Last-Event-ID` as a number (absent or blank → `undefined`); else `invalid_last_event_id`. */
export function parseLastEventId(raw: string | string[] | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const text = Array.isArray(raw) ? raw.join(',') : raw.trim();
  if (text === '') return undefined;
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value)) throw new InvalidLastEventIdError(text);
  return value;
}

/** `?maxQueued=` as a number (absent → `undefined`); range checked by the bus. */
export function parseMaxQueued(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value)) throw new InvalidMaxQueuedError(raw, MIN_MAX_QUEUED, MAX_MAX_QUEUED);
  return value;
}

/** `GET /session/:id/events`: the session's SSE stream with replay (PROTOCOL §6). */
export function eventRoutes(app: FastifyInstance, daemon: Daemon, heartbeatMs: number): void {
  app.get<{ Params: SessionParams; Querystring: { maxQueued?: string } }>(
    '/session/:id/events',
    async (request, reply) => {
      clientIdOf(request);
      const bus = replayableBusOf(daemon, request.params.id);
      const lastEventId = parseLastEventId(request.headers['last-event-id']);
      const epochHeader = request.headers['x-qwen-event-epoch'];
      const epoch = typeof epochHeader === 'string' && epochHeader.length > 0 ? epochHeader : undefined;
      const maxQueued = parseMaxQueued(request.query.maxQueued);
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
