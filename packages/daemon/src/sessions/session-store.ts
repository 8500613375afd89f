import type { ConversationMessage } from './agent.js';
import {
  compareListPosition,
  decodeListCursor,
  encodeListCursor,
  listPageSize,
  type SessionListOptions,
  type SessionListPage,
  type StoredSessionSummary,
} from './session-listing.js';

/** `single` coalesces onto one default session per workspace; `thread` always creates. */
export type SessionScope = 'single' | 'thread';

/** What a store keeps of one session: its metadata and its (bounded) conversation. */
export interface SessionRecord {
  sessionId: string;
  workspaceCwd: string;
  cwd: string;
  scope: SessionScope;
  /** Wall-clock epoch milliseconds. */
  createdAt: number;
  /** Wall-clock epoch milliseconds of the last change. */
  updatedAt: number;
  displayName?: string;
  forkedFrom?: { sessionId: string };
  conversation: ConversationMessage[];
}

/**
 * Persistence of sessions, so a session can be loaded or resumed after a restart. The bridge
 * calls `save` after a session opens, after each turn that changed the conversation, and for
 * a branch; saves of one session are issued one at a time and in order. A failed save is
 * reported as a `session_recording_degraded` event and never fails a prompt.
 */
export interface SessionStore {
  save(record: SessionRecord): Promise<void>;
  /** The stored record, or `undefined` when the store has none for `sessionId`. */
  load(sessionId: string): Promise<SessionRecord | undefined>;
  /**
   * One page of the stored sessions of a workspace (its resolved root, as the bridge records
   * it), newest first by `createdAt` then `sessionId` (see `ListPosition`), with a cursor of
   * `encodeListCursor`. Optional: a store without it lists nothing after a restart.
   */
  list?(workspaceCwd: string, options?: SessionListOptions): Promise<SessionListPage>;
}

/** Default number of records a {@link MemorySessionStore} keeps. */
export const DEFAULT_MEMORY_STORE_MAX_RECORDS = 1024;

/**
 * An in-memory {@link SessionStore}: keeps deep copies of at most `maxRecords` records and
 * forgets the least recently saved one beyond that.
 */
export class MemorySessionStore implements SessionStore {
  private readonly records = new Map<string, SessionRecord>();

  constructor(readonly maxRecords = DEFAULT_MEMORY_STORE_MAX_RECORDS) {
    if (!Number.isInteger(maxRecords) || maxRecords < 1)
      throw new RangeError(`maxRecords must be a positive integer, got ${String(maxRecords)}`);
  }

  /** Records held now. */
  get size(): number {
    return this.records.size;
  }

  async save(record: SessionRecord): Promise<void> {
    this.records.delete(record.sessionId);
    this.records.set(record.sessionId, structuredClone(record));
    if (this.records.size > this.maxRecords) {
      const oldest = this.records.keys().next();
      if (!oldest.done) this.records.delete(oldest.value);
    }
  }

  async load(sessionId: string): Promise<SessionRecord | undefined> {
    const record = this.records.get(sessionId);
    return record === undefined ? undefined : structuredClone(record);
  }

  async list(workspaceCwd: string, options: SessionListOptions = {}): Promise<SessionListPage> {
    const size = listPageSize(options.size);
    const after = options.cursor === undefined ? undefined : decodeListCursor(options.cursor);
    const matching = [...this.records.values()]
      .filter(
        (record) =>
          record.workspaceCwd === workspaceCwd &&
          (after === undefined || compareListPosition(after, record) < 0),
      )
      .sort(compareListPosition);
    const sessions = matching.slice(0, size).map(({ conversation, ...metadata }): StoredSessionSummary => ({
      ...structuredClone(metadata),
      messageCount: conversation.length,
    }));
    const last = sessions.at(-1);
    return matching.length > size && last !== undefined
      ? { sessions, nextCursor: encodeListCursor(last) }
      : { sessions };
  }
}
