import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { openSqlite } from '@sluice/runtime';
import { DeltaSessionStore, fromMessageRow, historyDelta } from '@sluice/store';
import {
  DEFAULT_MAX_CONVERSATION_BYTES,
  DEFAULT_MAX_CONVERSATION_MESSAGES,
  type ConversationMessage,
  type SessionListOptions,
  type SessionListPage,
  type SessionRecord,
} from '../sessions/index.js';
import { nonNegativeInteger, positiveInteger, positiveIntegerOrInfinity } from '../validate.js';
import { SessionStoreClosedError } from './errors.js';
import { SqliteAdmissionLedger } from './sqlite-admission-ledger.js';
import { SessionStoreListing } from './session-store-listing.js';
import { migrateSessionStore } from './session-store-schema.js';
import { SessionStoreStatements, type Position } from './session-store-statements.js';

/** Default of {@link SqliteSessionStoreOptions.maxSessions}. */
export const DEFAULT_SQLITE_STORE_MAX_SESSIONS = 1024;
/** Default of {@link SqliteSessionStoreOptions.maxCacheBytes} (16 MiB of message text). */
export const DEFAULT_SQLITE_STORE_MAX_CACHE_BYTES = 16 * 1024 * 1024;
/** Default of {@link SqliteSessionStoreOptions.busyTimeoutMs}; the journal's default too. */
export const DEFAULT_SQLITE_STORE_BUSY_TIMEOUT_MS = 5000;
/** Default of {@link SqliteSessionStoreOptions.walAutocheckpointPages}; the journal's default too. */
export const DEFAULT_SQLITE_STORE_WAL_AUTOCHECKPOINT_PAGES = 10_000;

/** Options of {@link SqliteSessionStore}; every value is validated at construction. */
export interface SqliteSessionStoreOptions {
  /** The database file: the journal's file (`SqliteJournal`'s `path`); created when missing. */
  path: string;
  /** How long a write waits for the journal's writer (or another process) to release the lock. Default 5000 ms. */
  busyTimeoutMs?: number;
  /** `NORMAL` (default) survives a process crash; `FULL` also survives power loss, at an fsync per save. */
  synchronous?: 'NORMAL' | 'FULL';
  /**
   * Sessions kept; saving a new session beyond it deletes the least recently saved one.
   * Default 1024, `Infinity` = unlimited.
   */
  maxSessions?: number;
  /** Messages of history kept per session (oldest trimmed first); use the bridge's value. Default 1000. */
  maxConversationMessages?: number;
  /** UTF-8 bytes of history text kept per session (oldest trimmed first); use the bridge's value. Default 4 MiB. */
  maxConversationBytes?: number;
  /**
   * Message text kept in memory of the last saved conversations, so that a save finds the
   * messages to append without reading the stored ones back. The text is shared with the
   * bridge's own copy while the session is open. Default 16 MiB; `0` disables the cache.
   */
  maxCacheBytes?: number;
  /**
   * WAL size, in pages, at which a save checkpoints it on the calling thread. Default 10 000,
   * the journal's default, so that the journal's writer thread usually checkpoints first.
   */
  walAutocheckpointPages?: number;
}

/**
 * A `SessionStore` in SQLite, in the journal's database file, next to the journal's
 * tables and open at the same time as `SqliteJournal` (WAL, `busy_timeout`, one short
 * transaction per save). Session metadata is one row; the conversation is one row per
 * message, and a save writes only what changed since the previous save: the messages the
 * turn appended and the deletion of those the history's bound trimmed. History is bounded
 * like the bridge bounds it in memory (`maxConversationMessages`, `maxConversationBytes`), and
 * the number of sessions by `maxSessions`, so the file does not grow without bound.
 *
 * The API is synchronous underneath (better-sqlite3): a save runs on the calling thread and
 * may wait up to `busyTimeoutMs` while the journal's writer holds the lock. Use one store per
 * file per process; another writer of the same sessions is detected and costs a re-read.
 */
export class SqliteSessionStore extends DeltaSessionStore {
  readonly path: string;
  readonly maxSessions: number;
  readonly maxConversationMessages: number;
  readonly maxConversationBytes: number;
  readonly maxCacheBytes: number;

  private readonly db: Database.Database;
  private readonly sql: SessionStoreStatements;
  private readonly listing: SessionStoreListing;
  private readonly saveTransaction: (
    record: SessionRecord,
    messages: readonly ConversationMessage[],
  ) => number;
  private readonly deleteTransaction: (sessionId: string) => boolean;
  protected readonly ledger: SqliteAdmissionLedger;
  private closed = false;

  /** Opens (creating when missing) the file, switches it to WAL and migrates the store's tables. */
  constructor(options: SqliteSessionStoreOptions) {
    const settings = storeSettings(options);
    super(settings);
    this.path = settings.path;
    this.maxSessions = settings.maxSessions;
    this.maxConversationMessages = settings.maxConversationMessages;
    this.maxConversationBytes = settings.maxConversationBytes;
    this.maxCacheBytes = settings.maxCacheBytes;
    this.db = openDatabase(this.path, settings);
    try {
      this.sql = new SessionStoreStatements(this.db);
      this.ledger = new SqliteAdmissionLedger(this.db);
      this.listing = new SessionStoreListing(this.db);
      this.saveTransaction = this.db.transaction(
        (record: SessionRecord, messages: readonly ConversationMessage[]): number =>
          this.write(record, messages),
      ).immediate;
      this.deleteTransaction = this.db.transaction((sessionId: string) => this.remove(sessionId)).immediate;
    } catch (error) {
      this.db.close();
      throw error;
    }
  }

  /** The stored record, or `undefined` when the store has none for `sessionId`. */
  async load(sessionId: string): Promise<SessionRecord | undefined> {
    this.checkOpen();
    if (typeof sessionId !== 'string') return undefined;
    const read = this.db.transaction(() => {
      const row = this.sql.selectSession.get(sessionId);
      if (row === undefined) return undefined;
      const position = this.sql.selectPosition.get(sessionId);
      const messages = this.sql.selectMessages.all(sessionId).map(fromMessageRow);
      return { row, revision: position?.revision ?? 0, messages };
    });
    const found = read();
    return found === undefined ? undefined : this.loaded(found.row, found.revision, found.messages);
  }

  /**
   * One page of the stored sessions of a workspace (its resolved absolute root, as the bridge
   * records it), newest first by `createdAt` then `sessionId` (`ListPosition`); `nextCursor`
   * leads to the next page. Rejects with {@link InvalidCursorError} for a cursor that
   * `encodeListCursor` did not make, and with a `RangeError` for a size outside [1, 1000].
   */
  async list(workspaceCwd: string, options: SessionListOptions = {}): Promise<SessionListPage> {
    this.checkOpen();
    return this.listing.page(workspaceCwd, options);
  }

  /**
   * Deletes a stored session, its history and its ledger entries, overwriting the deleted text
   * in the file (`secure_delete`); resolves `false` when there was none.
   */
  async delete(sessionId: string): Promise<boolean> {
    this.checkOpen();
    this.forget(sessionId);
    return this.deleteTransaction(sessionId);
  }

  /** Releases the file. Later calls reject with {@link SessionStoreClosedError}; closing twice is fine. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.forgetAll();
    this.db.close();
  }

  /** Runs the save transaction (see `DeltaSessionStore.save`). */
  protected writeSession(record: SessionRecord, messages: readonly ConversationMessage[]): number {
    return this.saveTransaction(record, messages);
  }

  /** Runs inside the save transaction; returns the session's new revision. */
  private write(record: SessionRecord, messages: readonly ConversationMessage[]): number {
    const { sessionId } = record;
    const position = this.sql.selectPosition.get(sessionId);
    const stored = position === undefined ? [] : this.storedMessages(sessionId, position);
    const delta = historyDelta(stored, messages, position?.first_seq ?? 0, position?.next_seq ?? 0);
    // The stored rows do not match the session's bookkeeping: start its history afresh.
    if (delta.restart) this.sql.deleteAllMessages.run(sessionId);
    if (delta.trimmed > 0) this.sql.deleteMessagesBefore.run(sessionId, delta.firstSeq);
    let seq = delta.appendAt;
    for (const message of delta.added)
      this.sql.insertMessage.run(
        sessionId,
        seq++,
        message.role,
        message.content,
        message.name ?? null,
        message.toolCallId ?? null,
      );
    const revision = (position?.revision ?? 0) + 1;
    this.sql.upsertSession.run(
      sessionId,
      record.workspaceCwd,
      record.cwd,
      record.scope,
      record.createdAt,
      record.updatedAt,
      record.displayName ?? null,
      record.forkedFrom?.sessionId ?? null,
      record.model ?? null,
      delta.firstSeq,
      delta.nextSeq,
      revision,
      this.sql.nextSavedOrder.get() ?? 1,
    );
    if (position === undefined && this.maxSessions !== Infinity) this.evictBeyondLimit(sessionId);
    return revision;
  }

  /**
   * The messages stored now for the session: from the cache when it holds this revision, else
   * read back. `undefined` when the rows do not match the session's `[first_seq, next_seq)`.
   */
  private storedMessages(sessionId: string, position: Position): readonly ConversationMessage[] | undefined {
    const cached = this.cachedMessages(sessionId, position.revision);
    if (cached !== undefined) return cached;
    const messages = this.sql.selectMessages.all(sessionId).map(fromMessageRow);
    return messages.length === position.next_seq - position.first_seq ? messages : undefined;
  }

  private evictBeyondLimit(savedSessionId: string): void {
    let excess = (this.sql.countSessions.get() ?? 0) - this.maxSessions;
    if (excess <= 0) return;
    for (const sessionId of this.sql.selectLeastRecentlySaved.all(excess + 1)) {
      if (excess === 0) break;
      if (sessionId === savedSessionId) continue;
      this.remove(sessionId);
      this.forget(sessionId);
      excess--;
    }
  }

  private remove(sessionId: string): boolean {
    this.ledger.forgetSession(sessionId);
    this.sql.deleteAllMessages.run(sessionId);
    return this.sql.deleteSessionRow.run(sessionId).changes > 0;
  }

  protected checkOpen(): void {
    if (this.closed) throw new SessionStoreClosedError(this.path);
  }
}

/** The store's settings from its options, each validated (in the options' order). */
function storeSettings(options: SqliteSessionStoreOptions) {
  const path = databasePath(options.path);
  const busyTimeoutMs = nonNegativeInteger(
    'busyTimeoutMs',
    options.busyTimeoutMs ?? DEFAULT_SQLITE_STORE_BUSY_TIMEOUT_MS,
  );
  const synchronous = options.synchronous ?? 'NORMAL';
  if (synchronous !== 'NORMAL' && synchronous !== 'FULL')
    throw new RangeError(`synchronous must be 'NORMAL' or 'FULL', got ${String(synchronous)}`);
  const maxSessions = positiveIntegerOrInfinity(
    'maxSessions',
    options.maxSessions ?? DEFAULT_SQLITE_STORE_MAX_SESSIONS,
  );
  const maxConversationMessages = positiveInteger(
    'maxConversationMessages',
    options.maxConversationMessages ?? DEFAULT_MAX_CONVERSATION_MESSAGES,
  );
  const maxConversationBytes = positiveInteger(
    'maxConversationBytes',
    options.maxConversationBytes ?? DEFAULT_MAX_CONVERSATION_BYTES,
  );
  const maxCacheBytes = nonNegativeInteger(
    'maxCacheBytes',
    options.maxCacheBytes ?? DEFAULT_SQLITE_STORE_MAX_CACHE_BYTES,
  );
  const walAutocheckpointPages = nonNegativeInteger(
    'walAutocheckpointPages',
    options.walAutocheckpointPages ?? DEFAULT_SQLITE_STORE_WAL_AUTOCHECKPOINT_PAGES,
  );
  return {
    path,
    busyTimeoutMs,
    synchronous,
    maxSessions,
    maxConversationMessages,
    maxConversationBytes,
    maxCacheBytes,
    walAutocheckpointPages,
  };
}

function databasePath(path: string): string {
  if (typeof path !== 'string' || path === '' || path.startsWith('file:'))
    throw new RangeError(`path must be a database file path, got ${String(path)}`);
  return path;
}

/** Opens the file in WAL mode with the store's pragmas and migrates the store's tables. */
function openDatabase(
  path: string,
  pragmas: { busyTimeoutMs: number; synchronous: 'NORMAL' | 'FULL'; walAutocheckpointPages: number },
): Database.Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = openSqlite(path, pragmas.busyTimeoutMs);
  try {
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal' && path !== ':memory:')
      throw new Error(`Session store "${path}" cannot use WAL mode (got ${String(mode)})`);
    db.pragma(`synchronous = ${pragmas.synchronous}`);
    db.pragma(`wal_autocheckpoint = ${pragmas.walAutocheckpointPages}`);
    // Every save rewrites part of a history: without it the old copies of its text would
    // stay in the free space of the file's pages, where a purge cannot reach them.
    db.pragma('secure_delete = ON');
    migrateSessionStore(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}
