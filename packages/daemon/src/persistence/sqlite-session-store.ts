import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import {
  DEFAULT_MAX_CONVERSATION_BYTES,
  DEFAULT_MAX_CONVERSATION_MESSAGES,
  InvalidSessionCursorError,
  decodeListCursor,
  encodeListCursor,
  isConversationMessage,
  listPageSize,
  type ConversationMessage,
  type ListPosition,
  type SessionListOptions,
  type SessionListPage,
  type SessionRecord,
  type SessionScope,
  type SessionStore,
} from '../sessions/index.js';
import { nonNegativeInteger, positiveInteger, positiveIntegerOrInfinity } from '../validate.js';
import { boundedStart, conversationOverlap, messageBytes } from './conversation-delta.js';
import { InvalidCursorError, SessionStoreClosedError } from './errors.js';
import { migrateSessionStore } from './session-store-schema.js';

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

interface SessionRow {
  session_id: string;
  workspace_cwd: string;
  cwd: string;
  scope: SessionScope;
  created_at: number;
  updated_at: number;
  display_name: string | null;
  forked_from_session_id: string | null;
  first_seq: number;
  next_seq: number;
}

interface MessageRow {
  role: ConversationMessage['role'];
  content: string;
  name: string | null;
  tool_call_id: string | null;
}

interface Position {
  first_seq: number;
  next_seq: number;
  revision: number;
}

/** What this store last saved of one session: its messages `[firstSeq, firstSeq + messages.length)`. */
interface CachedConversation {
  revision: number;
  messages: readonly ConversationMessage[];
  bytes: number;
}

const SESSION_COLUMNS =
  'session_id, workspace_cwd, cwd, scope, created_at, updated_at, display_name, forked_from_session_id, first_seq, next_seq';

/**
 * A {@link SessionStore} in SQLite, in the journal's database file, next to the journal's
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
export class SqliteSessionStore implements SessionStore {
  readonly path: string;
  readonly maxSessions: number;
  readonly maxConversationMessages: number;
  readonly maxConversationBytes: number;
  readonly maxCacheBytes: number;

  private readonly db: Database.Database;
  private readonly selectSession: Database.Statement<[string], SessionRow>;
  private readonly selectPosition: Database.Statement<[string], Position>;
  private readonly selectMessages: Database.Statement<[string], MessageRow>;
  private readonly insertMessage: Database.Statement<
    [string, number, string, string, string | null, string | null]
  >;
  private readonly deleteMessagesBefore: Database.Statement<[string, number]>;
  private readonly deleteAllMessages: Database.Statement<[string]>;
  private readonly upsertSession: Database.Statement<unknown[]>;
  private readonly deleteSessionRow: Database.Statement<[string]>;
  private readonly nextSavedOrder: Database.Statement<[], number>;
  private readonly countSessions: Database.Statement<[], number>;
  private readonly selectLeastRecentlySaved: Database.Statement<[number], string>;
  private readonly listFirstPage: Database.Statement<[string, number], SessionRow>;
  private readonly listNextPage: Database.Statement<[string, number, number, string, number], SessionRow>;
  private readonly saveTransaction: (
    record: SessionRecord,
    messages: readonly ConversationMessage[],
  ) => number;
  private readonly deleteTransaction: (sessionId: string) => boolean;

  /** Least recently used first. */
  private readonly cache = new Map<string, CachedConversation>();
  private cacheBytes = 0;
  private closed = false;

  /** Opens (creating when missing) the file, switches it to WAL and migrates the store's tables. */
  constructor(options: SqliteSessionStoreOptions) {
    this.path = databasePath(options.path);
    const busyTimeoutMs = nonNegativeInteger(
      'busyTimeoutMs',
      options.busyTimeoutMs ?? DEFAULT_SQLITE_STORE_BUSY_TIMEOUT_MS,
    );
    const synchronous = options.synchronous ?? 'NORMAL';
    if (synchronous !== 'NORMAL' && synchronous !== 'FULL')
      throw new RangeError(`synchronous must be 'NORMAL' or 'FULL', got ${String(synchronous)}`);
    this.maxSessions = positiveIntegerOrInfinity(
      'maxSessions',
      options.maxSessions ?? DEFAULT_SQLITE_STORE_MAX_SESSIONS,
    );
    this.maxConversationMessages = positiveInteger(
      'maxConversationMessages',
      options.maxConversationMessages ?? DEFAULT_MAX_CONVERSATION_MESSAGES,
    );
    this.maxConversationBytes = positiveInteger(
      'maxConversationBytes',
      options.maxConversationBytes ?? DEFAULT_MAX_CONVERSATION_BYTES,
    );
    this.maxCacheBytes = nonNegativeInteger(
      'maxCacheBytes',
      options.maxCacheBytes ?? DEFAULT_SQLITE_STORE_MAX_CACHE_BYTES,
    );
    const walAutocheckpointPages = nonNegativeInteger(
      'walAutocheckpointPages',
      options.walAutocheckpointPages ?? DEFAULT_SQLITE_STORE_WAL_AUTOCHECKPOINT_PAGES,
    );

    if (this.path !== ':memory:') mkdirSync(dirname(this.path), { recursive: true });
    this.db = new Database(this.path);
    try {
      this.db.pragma(`busy_timeout = ${busyTimeoutMs}`);
      const mode = this.db.pragma('journal_mode = WAL', { simple: true });
      if (mode !== 'wal' && this.path !== ':memory:')
        throw new Error(`Session store "${this.path}" cannot use WAL mode (got ${String(mode)})`);
      this.db.pragma(`synchronous = ${synchronous}`);
      this.db.pragma(`wal_autocheckpoint = ${walAutocheckpointPages}`);
      migrateSessionStore(this.db);

      const db = this.db;
      this.selectSession = db.prepare(`SELECT ${SESSION_COLUMNS} FROM sluice_sessions WHERE session_id = ?`);
      this.selectPosition = db.prepare(
        'SELECT first_seq, next_seq, revision FROM sluice_sessions WHERE session_id = ?',
      );
      this.selectMessages = db.prepare(
        'SELECT role, content, name, tool_call_id FROM sluice_session_messages WHERE session_id = ? ORDER BY seq',
      );
      this.insertMessage = db.prepare(
        `INSERT INTO sluice_session_messages (session_id, seq, role, content, name, tool_call_id)
         VALUES (?, ?, ?, ?, ?, ?)`,
      );
      this.deleteMessagesBefore = db.prepare(
        'DELETE FROM sluice_session_messages WHERE session_id = ? AND seq < ?',
      );
      this.deleteAllMessages = db.prepare('DELETE FROM sluice_session_messages WHERE session_id = ?');
      this.upsertSession = db.prepare(
        `INSERT INTO sluice_sessions (${SESSION_COLUMNS}, revision, saved_order)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (session_id) DO UPDATE SET
           workspace_cwd = excluded.workspace_cwd, cwd = excluded.cwd, scope = excluded.scope,
           created_at = excluded.created_at, updated_at = excluded.updated_at,
           display_name = excluded.display_name, forked_from_session_id = excluded.forked_from_session_id,
           first_seq = excluded.first_seq, next_seq = excluded.next_seq,
           revision = excluded.revision, saved_order = excluded.saved_order`,
      );
      this.deleteSessionRow = db.prepare('DELETE FROM sluice_sessions WHERE session_id = ?');
      this.nextSavedOrder = db
        .prepare<[], number>('SELECT coalesce(max(saved_order), 0) + 1 FROM sluice_sessions')
        .pluck();
      this.countSessions = db.prepare<[], number>('SELECT count(*) FROM sluice_sessions').pluck();
      this.selectLeastRecentlySaved = db
        .prepare<[number], string>('SELECT session_id FROM sluice_sessions ORDER BY saved_order LIMIT ?')
        .pluck();
      this.listFirstPage = db.prepare(
        `SELECT ${SESSION_COLUMNS} FROM sluice_sessions WHERE workspace_cwd = ?
         ORDER BY created_at DESC, session_id DESC LIMIT ?`,
      );
      this.listNextPage = db.prepare(
        `SELECT ${SESSION_COLUMNS} FROM sluice_sessions
         WHERE workspace_cwd = ? AND (created_at < ? OR (created_at = ? AND session_id < ?))
         ORDER BY created_at DESC, session_id DESC LIMIT ?`,
      );
      this.saveTransaction = db.transaction(
        (record: SessionRecord, messages: readonly ConversationMessage[]): number =>
          this.write(record, messages),
      ).immediate;
      this.deleteTransaction = db.transaction((sessionId: string) => this.remove(sessionId)).immediate;
    } catch (error) {
      this.db.close();
      throw error;
    }
  }

  /**
   * Stores the record. Writes the session's metadata row, deletes the stored messages the
   * record no longer holds at its start and appends the ones it holds beyond the stored ones,
   * in one transaction. A history longer than the store's bounds keeps its newest messages.
   * Rejects with a `TypeError` naming a malformed field, and with the SQLite error when the
   * transaction failed (the stored session is then unchanged).
   */
  async save(record: SessionRecord): Promise<void> {
    this.checkOpen();
    checkRecord(record);
    const all = record.conversation;
    const start = boundedStart(all, this.maxConversationMessages, this.maxConversationBytes);
    const messages = start === 0 ? all : all.slice(start);
    let revision: number;
    try {
      revision = this.saveTransaction(record, messages);
    } catch (error) {
      this.forget(record.sessionId);
      throw error;
    }
    this.remember(record.sessionId, revision, messages.map(copyMessage));
  }

  /** The stored record, or `undefined` when the store has none for `sessionId`. */
  async load(sessionId: string): Promise<SessionRecord | undefined> {
    this.checkOpen();
    if (typeof sessionId !== 'string') return undefined;
    const read = this.db.transaction(() => {
      const row = this.selectSession.get(sessionId);
      if (row === undefined) return undefined;
      const position = this.selectPosition.get(sessionId);
      const messages = this.selectMessages.all(sessionId).map(fromMessageRow);
      return { row, revision: position?.revision ?? 0, messages };
    });
    const found = read();
    if (found === undefined) return undefined;
    const { row, revision, messages } = found;
    this.remember(sessionId, revision, messages);
    const record: SessionRecord = { ...toMetadata(row), conversation: messages.map(copyMessage) };
    return record;
  }

  /**
   * One page of the stored sessions of a workspace (its resolved absolute root, as the bridge
   * records it), newest first by `createdAt` then `sessionId` (`ListPosition`); `nextCursor`
   * leads to the next page. Rejects with {@link InvalidCursorError} for a cursor that
   * `encodeListCursor` did not make, and with a `RangeError` for a size outside [1, 1000].
   */
  async list(workspaceCwd: string, options: SessionListOptions = {}): Promise<SessionListPage> {
    this.checkOpen();
    const size = listPageSize(options.size);
    let rows: SessionRow[];
    if (options.cursor === undefined) rows = this.listFirstPage.all(workspaceCwd, size + 1);
    else {
      const { createdAt, sessionId } = decodeCursor(options.cursor);
      rows = this.listNextPage.all(workspaceCwd, createdAt, createdAt, sessionId, size + 1);
    }
    const page: SessionListPage = {
      sessions: rows.slice(0, size).map((row) => ({
        ...toMetadata(row),
        messageCount: row.next_seq - row.first_seq,
      })),
    };
    const last = rows.length > size ? rows[size - 1] : undefined;
    if (last !== undefined)
      page.nextCursor = encodeListCursor({ createdAt: last.created_at, sessionId: last.session_id });
    return page;
  }

  /** Deletes a stored session and its history; resolves `false` when there was none. */
  async delete(sessionId: string): Promise<boolean> {
    this.checkOpen();
    this.forget(sessionId);
    return this.deleteTransaction(sessionId);
  }

  /** Releases the file. Later calls reject with {@link SessionStoreClosedError}; closing twice is fine. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.cache.clear();
    this.cacheBytes = 0;
    this.db.close();
  }

  /** Runs inside the save transaction; returns the session's new revision. */
  private write(record: SessionRecord, messages: readonly ConversationMessage[]): number {
    const { sessionId } = record;
    const position = this.selectPosition.get(sessionId);
    let firstSeq = position?.first_seq ?? 0;
    let nextSeq = position?.next_seq ?? 0;
    const stored = position === undefined ? [] : this.storedMessages(sessionId, position);
    if (stored === undefined) {
      // The stored rows do not match the session's bookkeeping: start its history afresh.
      this.deleteAllMessages.run(sessionId);
      firstSeq = nextSeq;
    }
    const kept = stored === undefined ? 0 : conversationOverlap(stored, messages);
    const trimmed = (stored?.length ?? 0) - kept;
    if (trimmed > 0) {
      firstSeq += trimmed;
      this.deleteMessagesBefore.run(sessionId, firstSeq);
    }
    for (let index = kept; index < messages.length; index++) {
      const message = messages[index] as ConversationMessage;
      this.insertMessage.run(
        sessionId,
        nextSeq++,
        message.role,
        message.content,
        message.name ?? null,
        message.toolCallId ?? null,
      );
    }
    const revision = (position?.revision ?? 0) + 1;
    this.upsertSession.run(
      sessionId,
      record.workspaceCwd,
      record.cwd,
      record.scope,
      record.createdAt,
      record.updatedAt,
      record.displayName ?? null,
      record.forkedFrom?.sessionId ?? null,
      firstSeq,
      nextSeq,
      revision,
      this.nextSavedOrder.get() ?? 1,
    );
    if (position === undefined && this.maxSessions !== Infinity) this.evictBeyondLimit(sessionId);
    return revision;
  }

  /**
   * The messages stored now for the session: from the cache when it holds this revision, else
   * read back. `undefined` when the rows do not match the session's `[first_seq, next_seq)`.
   */
  private storedMessages(sessionId: string, position: Position): readonly ConversationMessage[] | undefined {
    const cached = this.cache.get(sessionId);
    if (cached !== undefined && cached.revision === position.revision) return cached.messages;
    const messages = this.selectMessages.all(sessionId).map(fromMessageRow);
    return messages.length === position.next_seq - position.first_seq ? messages : undefined;
  }

  private evictBeyondLimit(savedSessionId: string): void {
    let excess = (this.countSessions.get() ?? 0) - this.maxSessions;
    if (excess <= 0) return;
    for (const sessionId of this.selectLeastRecentlySaved.all(excess + 1)) {
      if (excess === 0) break;
      if (sessionId === savedSessionId) continue;
      this.remove(sessionId);
      this.forget(sessionId);
      excess--;
    }
  }

  private remove(sessionId: string): boolean {
    this.deleteAllMessages.run(sessionId);
    return this.deleteSessionRow.run(sessionId).changes > 0;
  }

  private remember(sessionId: string, revision: number, messages: readonly ConversationMessage[]): void {
    this.forget(sessionId);
    if (this.maxCacheBytes === 0) return;
    let bytes = 0;
    for (const message of messages) bytes += messageBytes(message);
    if (bytes > this.maxCacheBytes) return;
    this.cache.set(sessionId, { revision, messages, bytes });
    this.cacheBytes += bytes;
    for (const [oldest, entry] of this.cache) {
      if (this.cacheBytes <= this.maxCacheBytes) break;
      this.cache.delete(oldest);
      this.cacheBytes -= entry.bytes;
    }
  }

  private forget(sessionId: string): void {
    const entry = this.cache.get(sessionId);
    if (entry === undefined) return;
    this.cache.delete(sessionId);
    this.cacheBytes -= entry.bytes;
  }

  private checkOpen(): void {
    if (this.closed) throw new SessionStoreClosedError(this.path);
  }
}

function toMetadata(row: SessionRow): Omit<SessionRecord, 'conversation'> {
  const metadata: Omit<SessionRecord, 'conversation'> = {
    sessionId: row.session_id,
    workspaceCwd: row.workspace_cwd,
    cwd: row.cwd,
    scope: row.scope,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.display_name !== null) metadata.displayName = row.display_name;
  if (row.forked_from_session_id !== null) metadata.forkedFrom = { sessionId: row.forked_from_session_id };
  return metadata;
}

function fromMessageRow(row: MessageRow): ConversationMessage {
  const message: ConversationMessage = { role: row.role, content: row.content };
  if (row.name !== null) message.name = row.name;
  if (row.tool_call_id !== null) message.toolCallId = row.tool_call_id;
  return message;
}

function copyMessage(message: ConversationMessage): ConversationMessage {
  const copy: ConversationMessage = { role: message.role, content: message.content };
  if (message.name !== undefined) copy.name = message.name;
  if (message.toolCallId !== undefined) copy.toolCallId = message.toolCallId;
  return copy;
}

/** Validates every stored field, so that a malformed record fails its own save and nothing else. */
function checkRecord(record: SessionRecord): void {
  if (typeof record !== 'object' || record === null)
    throw new TypeError(`session record must be an object, got ${String(record)}`);
  for (const field of ['sessionId', 'workspaceCwd', 'cwd'] as const) {
    const value: unknown = record[field];
    if (typeof value !== 'string' || value === '')
      throw new TypeError(`session record ${field} must be a non-empty string, got ${JSON.stringify(value)}`);
  }
  if (record.scope !== 'single' && record.scope !== 'thread')
    throw new TypeError(
      `session record scope must be 'single' or 'thread', got ${JSON.stringify(record.scope)}`,
    );
  for (const field of ['createdAt', 'updatedAt'] as const) {
    const value: unknown = record[field];
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw new TypeError(`session record ${field} must be a finite number (epoch ms), got ${String(value)}`);
  }
  if (record.displayName !== undefined && typeof record.displayName !== 'string')
    throw new TypeError(`session record displayName must be a string, got ${String(record.displayName)}`);
  if (
    record.forkedFrom !== undefined &&
    (typeof record.forkedFrom !== 'object' ||
      record.forkedFrom === null ||
      typeof record.forkedFrom.sessionId !== 'string')
  )
    throw new TypeError(`session record forkedFrom must be { sessionId: string }`);
  if (!Array.isArray(record.conversation))
    throw new TypeError(`session record conversation must be an array, got ${typeof record.conversation}`);
  record.conversation.forEach((message: unknown, index) => {
    if (!isConversationMessage(message))
      throw new TypeError(`session record conversation[${index}] is not a conversation message`);
  });
}

function decodeCursor(cursor: string): ListPosition {
  try {
    return decodeListCursor(cursor);
  } catch (error) {
    if (error instanceof InvalidSessionCursorError) throw new InvalidCursorError(String(cursor));
    throw error;
  }
}

function databasePath(path: string): string {
  if (typeof path !== 'string' || path === '' || path.startsWith('file:'))
    throw new RangeError(`path must be a database file path, got ${String(path)}`);
  return path;
}
