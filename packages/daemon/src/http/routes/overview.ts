import * as z from 'zod/mini';
import { withOpenPermissions } from '../../permissions/index.js';
import { badInput } from '../openapi/route-doc.js';
import { defineRoute } from '../route.js';
import { parseInput } from '../schemas/parse-input.js';
import { OverviewQuery, SessionSummary, explainSessionListQuery } from '../schemas/session-schemas.js';
import { withWireTimes } from '../wire-time.js';
import { SESSION_SUMMARY_EXAMPLE } from '../openapi/route-examples.js';

/** Sessions `GET /daemon/sessions` lists without `?size=`. */
export const DEFAULT_OVERVIEW_SIZE = 100;

/**
 * `GET /daemon/sessions?size=N` (a Sluice addition, read-only): the live sessions of every
 * workspace, oldest first, at most `size` of them (default 100, at most 1000), with the daemon's
 * totals — what `sluice status` shows. Unlike `GET /workspace/:cwd/sessions` it lists no stored
 * sessions and tells whether the daemon is draining. Summaries carry no prompt text.
 */
export const OVERVIEW_ROUTE = defineRoute(
  {
    method: 'GET',
    path: '/daemon/sessions',
    tag: 'operations',
    summary: 'The live sessions of every workspace, with the daemon’s totals',
    description:
      'What `sluice status` shows: the live sessions of every workspace, oldest first, at most `size` (default 100, at most 1000; `truncated` says when there are more), whether the daemon drains, and its totals. No stored sessions, no prompt text.',
    query: OverviewQuery,
    responses: {
      200: {
        description: '`{draining, sessionCount, pendingPromptTotal, sessions, truncated}`.',
        schema: z.looseObject({
          draining: z.boolean(),
          sessionCount: z.number(),
          pendingPromptTotal: z.number(),
          sessions: z.array(SessionSummary),
          truncated: z.boolean(),
        }),
        example: {
          draining: false,
          sessionCount: 1,
          pendingPromptTotal: 1,
          sessions: [SESSION_SUMMARY_EXAMPLE],
          truncated: false,
        },
      },
      400: badInput(['invalid_size']),
    },
  },
  {
    handler:
      ({ sessions, permissions }) =>
      async (request) => {
        const size = overviewSize(request.query);
        const live = sessions.listSessions();
        return {
          draining: sessions.draining,
          sessionCount: live.length,
          pendingPromptTotal: sessions.pendingPromptTotal,
          sessions: live
            .slice(0, size)
            .map((summary) => withWireTimes(withOpenPermissions(summary, permissions))),
          truncated: live.length > size,
        };
      },
  },
);

function overviewSize(query: Record<string, unknown>): number {
  const { size } = parseInput(OverviewQuery, query, explainSessionListQuery);
  return size === undefined || size === '' ? DEFAULT_OVERVIEW_SIZE : Number(size);
}
