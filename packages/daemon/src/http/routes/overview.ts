import type { FastifyInstance } from 'fastify';
import { withOpenPermissions, type PermissionBroker } from '../../permissions/index.js';
import type { SessionBridge } from '../../sessions/index.js';
import { parseInput } from '../schemas/parse-input.js';
import { OverviewQuery, explainSessionListQuery } from '../schemas/session-schemas.js';
import { withWireTimes } from '../wire-time.js';

/** Sessions `GET /daemon/sessions` lists without `?size=`. */
export const DEFAULT_OVERVIEW_SIZE = 100;

/**
 * `GET /daemon/sessions?size=N` (a Sluice addition, read-only): the live sessions of every
 * workspace, oldest first, at most `size` of them (default 100, at most 1000), with the daemon's
 * totals — what `sluice status` shows. Unlike `GET /workspace/:cwd/sessions` it lists no stored
 * sessions and tells whether the daemon is draining. Summaries carry no prompt text.
 */
export function overviewRoutes(
  app: FastifyInstance,
  sessions: SessionBridge,
  permissions: PermissionBroker,
): void {
  app.get<{ Querystring: Record<string, unknown> }>('/daemon/sessions', async (request) => {
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
  });
}

function overviewSize(query: Record<string, unknown>): number {
  const { size } = parseInput(OverviewQuery, query, explainSessionListQuery);
  return size === undefined || size === '' ? DEFAULT_OVERVIEW_SIZE : Number(size);
}
