import type { ConversationMessage } from './session-types.js';

export { checkRecord, copyMessage, fromMessageRow, toMetadata } from '@sluice/runtime';

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
