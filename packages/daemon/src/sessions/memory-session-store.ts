import { compareListPosition, decodeListCursor, encodeListCursor, listPageSize } from './session-listing.js';
import type {
  SessionListOptions,
  SessionListPage,
  SessionRecord,
  SessionStore,
  StoredSessionSummary,
} from '@sluice/store';
import { positiveInteger } from '../validate.js';

/** Default number of records a {@link MemorySessionStore} keeps. */
export const DEFAULT_MEMORY_STORE_MAX_RECORDS = 1024;

/**
 * An in-memory {@link SessionStore}: keeps deep copies of at most `maxRecords` records and
 * forgets the least recently saved one beyond that.
 */
export class MemorySessionStore implements SessionStore {
  private readonly records = new Map<string, SessionRecord>();

  readonly maxRecords: number;

  constructor(maxRecords = DEFAULT_MEMORY_STORE_MAX_RECORDS) {
    this.maxRecords = positiveInteger('maxRecords', maxRecords);
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

  async delete(sessionId: string): Promise<boolean> {
    return this.records.delete(sessionId);
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
