import { SessionNotFoundError } from './errors.js';
import type { SessionPersistence } from './persistence.js';
import type { SessionBuses } from './session-buses.js';
import type { SessionDirectory } from './session-directory.js';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a purge works on: the live sessions, the store, and the closed sessions' replay. */
export interface PurgeParts {
  directory: SessionDirectory;
  persistence: SessionPersistence;
  streams: SessionBuses;
}

/**
 * Removes a session for good (`DELETE /session/:id?purge=true`): closes it when live (reason
 * `session_purged`, its pending prompts end `turn_error session_closed`), waits for its saves,
 * then deletes what the store holds of it — its record, history and admission-ledger entries
 * (the SQLite store also its settled model calls) — and the replay of its closed stream.
 * `SessionNotFoundError` when it is neither live nor stored in a workspace served here.
 */
export async function purgeSession(parts: PurgeParts, id: string, clientId?: string): Promise<void> {
  const { directory, persistence, streams } = parts;
  // Ids are stored in lower case, as create records a caller-chosen one.
  const sessionId = UUID_PATTERN.test(id) ? id.toLowerCase() : id;
  const live = directory.get(sessionId);
  if (live !== undefined) {
    await directory.close(sessionId, {
      reason: 'session_purged',
      ...(clientId === undefined ? {} : { clientId }),
    });
    await persistence.settled(live);
  } else if (!(await directory.isStoredNotLive(sessionId))) throw new SessionNotFoundError(sessionId);
  const store = persistence.store;
  if (store !== undefined) {
    if (store.delete === undefined) throw new TypeError('this session store cannot delete sessions');
    await store.delete(sessionId);
  }
  streams.forgetClosed(sessionId);
}
