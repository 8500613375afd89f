import type { ConversationMessage, SessionRecord } from './session-types.js';

/** A row of `sluice_sessions` as the store reads it. */
export interface SessionRow {
  session_id: string;
  workspace_cwd: string;
  cwd: string;
  scope: 'single' | 'thread';
  created_at: string | number;
  updated_at: string | number;
  display_name: string | null;
  forked_from_session_id: string | null;
  first_seq: string | number;
  next_seq: string | number;
}

/** A row of `sluice_session_messages`. */
export interface MessageRow {
  role: ConversationMessage['role'];
  content: string;
  name: string | null;
  tool_call_id: string | null;
}

/** The columns of a {@link SessionRow}. */
export const SESSION_COLUMNS =
  'session_id, workspace_cwd, cwd, scope, created_at, updated_at, display_name, forked_from_session_id, first_seq, next_seq';

/** A session's metadata from its row (`bigint` columns arrive as strings). */
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
  return metadata;
}

/** A stored message, its absent optional fields left out. */
export function fromMessageRow(row: MessageRow): ConversationMessage {
  const message: ConversationMessage = { role: row.role, content: row.content };
  if (row.name !== null) message.name = row.name;
  if (row.tool_call_id !== null) message.toolCallId = row.tool_call_id;
  return message;
}

/** A copy of the stored fields of `message`. */
export function copyMessage(message: ConversationMessage): ConversationMessage {
  const copy: ConversationMessage = { role: message.role, content: message.content };
  if (message.name !== undefined) copy.name = message.name;
  if (message.toolCallId !== undefined) copy.toolCallId = message.toolCallId;
  return copy;
}

const ROLES = new Set(['user', 'assistant', 'tool']);

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
  for (const field of ['createdAt', 'updatedAt'] as const)
    if (typeof record[field] !== 'number' || !Number.isFinite(record[field]))
      throw new TypeError(
        `session record ${field} must be a finite number (epoch ms), got ${String(record[field])}`,
      );
  if (record.displayName !== undefined && typeof record.displayName !== 'string')
    throw new TypeError(`session record displayName must be a string, got ${String(record.displayName)}`);
  if (record.forkedFrom !== undefined && typeof record.forkedFrom?.sessionId !== 'string')
    throw new TypeError('session record forkedFrom must be { sessionId: string }');
  if (!Array.isArray(record.conversation))
    throw new TypeError(`session record conversation must be an array, got ${typeof record.conversation}`);
  record.conversation.forEach((message: ConversationMessage, index) => {
    const ok =
      typeof message === 'object' &&
      message !== null &&
      ROLES.has(message.role) &&
      typeof message.content === 'string' &&
      (message.name === undefined || typeof message.name === 'string') &&
      (message.toolCallId === undefined || typeof message.toolCallId === 'string');
    if (!ok) throw new TypeError(`session record conversation[${index}] is not a conversation message`);
  });
}
