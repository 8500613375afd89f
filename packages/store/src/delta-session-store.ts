import { ConversationCache } from './conversation-cache.js';
import { boundedStart, conversationOverlap } from './conversation-delta.js';
import type { AcceptedPrompt, ConversationMessage, SessionRecord, SettledPrompt } from './session-record.js';
import { checkRecord, copyMessage, toMetadata, type SessionRow } from './session-record-codec.js';
import type { AdmissionLedgerStore, SessionStore } from './session-store.js';

/** The bounds of a {@link DeltaSessionStore}, validated by the store that passes them. */
export interface DeltaStoreBounds {
  /** Messages of history kept per session (oldest trimmed first). */
  readonly maxConversationMessages: number;
  /** UTF-8 bytes of history text kept per session (oldest trimmed first). */
  readonly maxConversationBytes: number;
  /** Message text of the last saved conversations kept in memory; `0` keeps none. */
  readonly maxCacheBytes: number;
}

/**
 * How one save changes a session's stored messages, the range `[firstSeq, nextSeq)`: delete
 * those before the new `firstSeq` (all of them when the stored rows were inconsistent), append
 * `added` from `appendAt`, and record the new range.
 */
export interface HistoryDelta {
  /** The stored rows did not match the range: delete them all and start afresh at `nextSeq`. */
  readonly restart: boolean;
  /** Stored messages dropped from the start (the history's bound trimmed them). */
  readonly trimmed: number;
  readonly firstSeq: number;
  readonly appendAt: number;
  readonly added: readonly ConversationMessage[];
  readonly nextSeq: number;
}

/**
 * The delta from the `stored` messages of the range `[firstSeq, nextSeq)` (`undefined` when the
 * rows did not match it) to `messages`: the longest suffix of `stored` that starts `messages`
 * is kept (`conversationOverlap`).
 */
export function historyDelta(
  stored: readonly ConversationMessage[] | undefined,
  messages: readonly ConversationMessage[],
  firstSeq: number,
  nextSeq: number,
): HistoryDelta {
  const kept = stored === undefined ? 0 : conversationOverlap(stored, messages);
  const trimmed = stored === undefined ? 0 : stored.length - kept;
  const start = stored === undefined ? nextSeq : firstSeq + trimmed;
  const added = kept === 0 ? messages : messages.slice(kept);
  return {
    restart: stored === undefined,
    trimmed,
    firstSeq: start,
    appendAt: nextSeq,
    added,
    nextSeq: nextSeq + added.length,
  };
}

/**
 * What the SQLite and the PostgreSQL session stores share (docs/decisions/006): a session is a
 * metadata row and one row per message of its bounded history, and a save writes only the
 * delta (`historyDelta`) in one transaction, finding the stored messages in a bounded cache of
 * the last saved conversations rather than reading them back. A store supplies its database's
 * save transaction, its reads and its admission ledger.
 */
export abstract class DeltaSessionStore implements SessionStore {
  private readonly cache: ConversationCache;

  protected constructor(private readonly bounds: DeltaStoreBounds) {
    this.cache = new ConversationCache(bounds.maxCacheBytes);
  }

  /** The store's admission ledger. */
  protected abstract readonly ledger: AdmissionLedgerStore;

  /** Throws the store's error once it is closed. */
  protected abstract checkOpen(): void;

  /**
   * Runs the save transaction of `messages` (the newest of the record's history within the
   * bounds) and returns the session's new revision; throws to leave the stored session unchanged.
   */
  protected abstract writeSession(
    record: SessionRecord,
    messages: readonly ConversationMessage[],
  ): number | Promise<number>;

  abstract load(sessionId: string): Promise<SessionRecord | undefined>;

  /**
   * Stores the record: the messages the turn appended and the deletion of those the bound
   * trimmed, in one transaction. Rejects with a `TypeError` naming a malformed field, and with
   * the store's error when the transaction failed (the stored session is then unchanged).
   */
  async save(record: SessionRecord): Promise<void> {
    this.checkOpen();
    checkRecord(record);
    const all = record.conversation;
    const start = boundedStart(all, this.bounds.maxConversationMessages, this.bounds.maxConversationBytes);
    const messages = start === 0 ? all : all.slice(start);
    let revision: number;
    try {
      revision = await this.writeSession(record, messages);
    } catch (error) {
      this.cache.forget(record.sessionId);
      throw error;
    }
    this.cache.remember(record.sessionId, revision, messages.map(copyMessage));
  }

  /** Records prompts accepted and prompts ended, in one transaction (the admission ledger). */
  async recordAdmissions(
    accepted: readonly AcceptedPrompt[],
    settled: readonly SettledPrompt[],
  ): Promise<void> {
    this.checkOpen();
    return this.ledger.recordAdmissions(accepted, settled);
  }

  /** The session's accepted prompts that never ended (a killed daemon's), oldest first; forgets them. */
  async takeUnsettled(sessionId: string): Promise<AcceptedPrompt[]> {
    this.checkOpen();
    return this.ledger.takeUnsettled(sessionId);
  }

  /** The record of a session read in one transaction at `revision`; remembers its messages. */
  protected loaded(row: SessionRow, revision: number, messages: ConversationMessage[]): SessionRecord {
    this.cache.remember(row.session_id, revision, messages);
    return { ...toMetadata(row), conversation: messages.map(copyMessage) };
  }

  /** The messages the session had at `revision`, when the cache holds them. */
  protected cachedMessages(sessionId: string, revision: number): readonly ConversationMessage[] | undefined {
    return this.cache.messages(sessionId, revision);
  }

  /** Forgets the cached messages of a session deleted or evicted. */
  protected forget(sessionId: string): void {
    this.cache.forget(sessionId);
  }

  /** Forgets every cached conversation (the store closed). */
  protected forgetAll(): void {
    this.cache.clear();
  }
}
