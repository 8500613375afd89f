import * as z from 'zod/mini';
import {
  DEFAULT_MAX_QUEUED,
  InvalidMaxQueuedError,
  MAX_MAX_QUEUED,
  MIN_MAX_QUEUED,
} from '../../events/index.js';
import { documented } from './common-schemas.js';
import type { IssueExplainer } from './parse-input.js';

/** `true` for a decimal integer in [MIN_MAX_QUEUED, MAX_MAX_QUEUED]. */
function isMaxQueued(text: string): boolean {
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  return Number.isSafeInteger(value) && value >= MIN_MAX_QUEUED && value <= MAX_MAX_QUEUED;
}

/** `GET /session/:id/events?maxQueued=` (PROTOCOL §6). */
export const EventsQuery = z.looseObject({
  maxQueued: z.optional(
    documented(
      z.string().check(z.refine(isMaxQueued)),
      `Events this subscriber may have queued, an integer in [${MIN_MAX_QUEUED}, ${MAX_MAX_QUEUED}] ` +
        `(default ${DEFAULT_MAX_QUEUED}): at 75 % a \`slow_client_warning\`, past it \`client_evicted\`.`,
      { pattern: '^[0-9]+$' },
    ),
  ),
});

/** `400 invalid_max_queued`, quoting the number when one was given. */
export const explainEventsQuery: IssueExplainer<Record<string, unknown>> = (_issue, query) => {
  const raw = query['maxQueued'];
  const value = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : raw;
  return new InvalidMaxQueuedError(value, MIN_MAX_QUEUED, MAX_MAX_QUEUED);
};

/** `Last-Event-ID`: replay the events after this id. */
export const LastEventIdHeader = documented(
  z.string().check(z.regex(/^\s*\d*\s*$/)),
  'Replay the retained events after this id, then `replay_complete`; absent = live only.',
);

/** `X-Qwen-Event-Epoch`: the epoch the client's `Last-Event-ID` belongs to. */
export const EventEpochHeader = documented(
  z.string(),
  'The epoch of `Last-Event-ID`; another epoch gets `state_resync_required` and the whole ring.',
);

/** One SSE frame's `data:` envelope (PROTOCOL §6). */
export const EventEnvelope = documented(
  z.looseObject({
    id: z.optional(z.int()),
    v: z.literal(1),
    type: z.string(),
    data: z.unknown(),
    promptId: z.optional(z.string()),
    originatorClientId: z.optional(z.string()),
    _meta: z.looseObject({ serverTimestamp: z.number() }),
  }),
  'A server-sent event stream (`text/event-stream`): frames `id:` (bus events only), `event: <type>` ' +
    'and one `data:` line holding this envelope; `: heartbeat` comments keep it open.',
);
