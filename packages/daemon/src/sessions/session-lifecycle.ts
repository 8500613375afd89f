import type { Clock } from '@sluice/runtime';
import { IdleSessions } from './idle-sessions.js';
import { purgeSession, type PurgeParts } from './session-purge.js';

/** What {@link SessionLifecycle} works on. */
export interface LifecycleParts extends PurgeParts {
  clock: Clock;
  /** `--session-idle-timeout-ms`; 0 = sessions are never closed for idleness. */
  idleTimeoutMs: number;
  onError: (error: unknown, context: string) => void;
}

/**
 * How sessions end besides a client's close: closed when nobody uses them for the idle
 * timeout (they stay stored), or purged — closed and deleted from the store with their history.
 */
export class SessionLifecycle {
  private readonly idle: IdleSessions | undefined;

  constructor(private readonly parts: LifecycleParts) {
    const { directory, streams, onError } = parts;
    this.idle = IdleSessions.start(parts.idleTimeoutMs, {
      clock: parts.clock,
      sessions: () => directory.values(),
      subscribers: (sessionId) => streams.subscriberCount(sessionId),
      close: (sessionId) =>
        void directory
          .close(sessionId, { reason: 'idle_timeout' })
          .catch((error: unknown) => onError(error, `idle close ${sessionId}`)),
    });
  }

  /** See {@link purgeSession}. */
  purge(sessionId: string, clientId?: string): Promise<void> {
    return purgeSession(this.parts, sessionId, clientId);
  }

  /** Stops the idle sweep (the daemon shuts down). */
  stop(): void {
    this.idle?.stop();
  }
}
