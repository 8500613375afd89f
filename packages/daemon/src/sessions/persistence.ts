import { SESSION_EVENT, type SessionEvent } from './session-events.js';
import type { SessionOwner, SessionRecord, SessionStore } from '@sluice/store';

/** What persistence needs of a live session. */
export interface SavableSession {
  readonly sessionId: string;
  readonly state: string;
  toRecord(): SessionRecord;
  publish(event: SessionEvent): void;
}

/**
 * The sessions' link to their {@link SessionStore}: saves of one session reach the store one
 * at a time and in order, a failed save is reported (`session_recording_degraded`) and never
 * fails a prompt, and concurrent restores of one id share one read.
 */
export class SessionPersistence {
  private readonly saving = new WeakMap<SavableSession, Promise<void>>();
  private readonly loading = new Map<string, Promise<SessionRecord | undefined>>();

  constructor(
    readonly store: SessionStore | undefined,
    private readonly onError: (error: unknown, context: string) => void,
  ) {}

  /** Queues a save of the session's current state behind its earlier saves; `undefined` without a store. */
  save(session: SavableSession): Promise<void> | undefined {
    const store = this.store;
    if (store === undefined) return undefined;
    const record = session.toRecord();
    const saved = (this.saving.get(session) ?? Promise.resolve())
      .then(() => store.save(record))
      .then(undefined, (error: unknown) => {
        this.onError(error, `store.save ${session.sessionId}`);
        if (session.state === 'open')
          session.publish({
            type: SESSION_EVENT.sessionRecordingDegraded,
            data: { sessionId: session.sessionId, reason: 'write_failed' },
          });
      });
    this.saving.set(session, saved);
    return saved;
  }

  /** Resolves once every save of the session issued so far has reached the store (or failed). */
  settled(session: SavableSession): Promise<void> {
    return this.saving.get(session) ?? Promise.resolve();
  }

  /**
   * Takes a stored session for this daemon before it opens it (a fleet's shared store): resolves
   * the daemon that has it open instead, or the record to open — read again once claimed, so
   * that it holds the previous owner's last save. A store that does not claim resolves `read`.
   */
  async claim(
    sessionId: string,
    read: SessionRecord,
  ): Promise<{ owner: SessionOwner } | { record: SessionRecord | undefined }> {
    const store = this.store;
    if (store?.claim === undefined) return { record: read };
    const owner = await store.claim(sessionId);
    if (owner !== undefined) return { owner };
    return { record: await store.load(sessionId) };
  }

  /**
   * Gives up the claim on a closed session once its last save is done, unless `stillClosed()`
   * says it was opened here again meanwhile. A failed release is reported; the claim then ends
   * with this daemon.
   */
  release(session: SavableSession, stillClosed: () => boolean): void {
    const store = this.store;
    if (store?.release === undefined) return;
    void (this.saving.get(session) ?? Promise.resolve())
      .then(() => (stillClosed() ? store.release?.(session.sessionId) : undefined))
      .then(undefined, (error: unknown) => this.onError(error, `store.release ${session.sessionId}`));
  }

  /** The stored record of a session; concurrent reads of one id share one store read. */
  load(sessionId: string): Promise<SessionRecord | undefined> {
    let loading = this.loading.get(sessionId);
    if (loading === undefined) {
      loading = this.store === undefined ? Promise.resolve(undefined) : this.store.load(sessionId);
      this.loading.set(sessionId, loading);
      const forget = (): void => {
        this.loading.delete(sessionId);
      };
      loading.then(forget, forget);
    }
    return loading;
  }
}
