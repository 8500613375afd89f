import type { ConversationMessage, SessionRecord, SessionScope } from './session-record.js';

// A session as every session store keeps it — the daemon's SQLite store and the fleet's
// PostgreSQL one share the tables `sluice_sessions` and `sluice_session_messages` — and the
// conversion between their rows and the record.

/** A row of `sluice_sessions` as a store reads it (a PostgreSQL `bigint` arrives as a string). */
export interface SessionRow {
  session_id: string;
  workspace_cwd: string;
  cwd: string;
  scope: SessionScope;
  created_at: string | number;
  updated_at: string | number;
  display_name: string | null;
  forked_from_session_id: string | null;
  /** The session's catalogue model; `null` for the default (and for sessions stored before it). */
  model: string | null;
  /** The session's stored messages are those of `seq` in `[first_seq, next_seq)`. */
  first_seq: string | number;
  next_seq: string | number;
}

/** The columns of a {@link SessionRow}, in its order. */
export const SESSION_COLUMNS =
  'session_id, workspace_cwd, cwd, scope, created_at, updated_at, display_name, forked_from_session_id, model, first_seq, next_seq';

/** A row of `sluice_session_messages` as a store reads it. */
export interface MessageRow {
  role: ConversationMessage['role'];
  content: string;
  name: string | null;
  tool_call_id: string | null;
}

const ROLES: ReadonlySet<string> = new Set(['user', 'assistant', 'tool']);

/** A session's metadata from its row. */
export function toMetadata(row: SessionRow): Omit<SessionRecord, 'conversation'> {
  const metadata: Omit<SessionRecord, 'conversation'> = {
    sessionId: row.session_id,
    workspaceCwd: row.workspace_cwd,
    cwd: row.cwd,
    scope: row.scope,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
  if (row.display_name !== null) metadata.displayName = row.display_name;
  if (row.forked_from_session_id !== null) metadata.forkedFrom = { sessionId: row.forked_from_session_id };
  if (row.model !== null) metadata.model = row.model;
  return metadata;
}

/** A stored message, its absent optional fields left out. */
export function fromMessageRow(row: MessageRow): ConversationMessage {
  const message: ConversationMessage = { role: row.role, content: row.content };
  if (row.name !== null) message.name = row.name;
  if (row.tool_call_id !== null) message.toolCallId = row.tool_call_id;
  return message;
}

/** A copy of the stored fields of `message`, so that the caller's object is not shared. */
export function copyMessage(message: ConversationMessage): ConversationMessage {
  const copy: ConversationMessage = { role: message.role, content: message.content };
  if (message.name !== undefined) copy.name = message.name;
  if (message.toolCallId !== undefined) copy.toolCallId = message.toolCallId;
  return copy;
}

/** True when `value` has the shape of a {@link ConversationMessage}. */
export function isConversationMessage(value: unknown): value is ConversationMessage {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate['role'] === 'string' &&
    ROLES.has(candidate['role']) &&
    typeof candidate['content'] === 'string' &&
    (candidate['name'] === undefined || typeof candidate['name'] === 'string') &&
    (candidate['toolCallId'] === undefined || typeof candidate['toolCallId'] === 'string')
  );
}

/** Validates every stored field, so that a malformed record fails its own save and nothing else. */
export function checkRecord(record: SessionRecord): void {
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
  if (record.model !== undefined && (typeof record.model !== 'string' || record.model === ''))
    throw new TypeError(
      `session record model must be a non-empty string, got ${JSON.stringify(record.model)}`,
    );
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
