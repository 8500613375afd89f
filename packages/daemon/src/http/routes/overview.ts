import { describeValue } from '@sluice/protocol';
import type { FastifyInstance } from 'fastify';
import { withOpenPermissions, type PermissionBroker } from '../../permissions/index.js';
import { MAX_SESSION_LIST_SIZE, type SessionBridge } from '../../sessions/index.js';
import { HttpError } from '../../wire/index.js';
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
  app.get<{ Querystring: { size?: unknown } }>('/daemon/sessions', async (request) => {
    const size = overviewSize(request.query.size);
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

function overviewSize(raw: unknown): number {
  if (raw === undefined || raw === '') return DEFAULT_OVERVIEW_SIZE;
  const value = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_SESSION_LIST_SIZE)
    throw new HttpError(
      400,
      'invalid_size',
      `size must be an integer in [1, ${MAX_SESSION_LIST_SIZE}], got ${describeValue(raw)}`,
    );
  return value;
}
