import { isConversationMessage, type ConversationMessage, type SessionRecord } from '../sessions/index.js';
import type { MessageRow, SessionRow } from './session-store-statements.js';

/** A session's metadata as the store keeps it in a {@link SessionRow}. */
export function toMetadata(row: SessionRow): Omit<SessionRecord, 'conversation'> {
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

/** A stored message as a conversation message, its absent optional fields left out. */
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
