import { SESSION_COLUMNS, type MessageRow, type SessionRow } from '@sluice/store';
import type Database from 'better-sqlite3';

/** Where a session's stored messages are: `[first_seq, next_seq)`, and how many saves it had. */
export interface Position {
  first_seq: number;
  next_seq: number;
  revision: number;
}

/** The statements a session store reads, saves, deletes and evicts sessions with, prepared once. */
export class SessionStoreStatements {
  readonly selectSession: Database.Statement<[string], SessionRow>;
  readonly selectPosition: Database.Statement<[string], Position>;
  readonly selectMessages: Database.Statement<[string], MessageRow>;
  readonly insertMessage: Database.Statement<[string, number, string, string, string | null, string | null]>;
  readonly deleteMessagesBefore: Database.Statement<[string, number]>;
  readonly deleteAllMessages: Database.Statement<[string]>;
  readonly upsertSession: Database.Statement<unknown[]>;
  readonly deleteSessionRow: Database.Statement<[string]>;
  readonly nextSavedOrder: Database.Statement<[], number>;
  readonly countSessions: Database.Statement<[], number>;
  readonly selectLeastRecentlySaved: Database.Statement<[number], string>;

  /** Prepares the statements on a database the store's migrations have run on. */
  constructor(db: Database.Database) {
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
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (session_id) DO UPDATE SET
         workspace_cwd = excluded.workspace_cwd, cwd = excluded.cwd, scope = excluded.scope,
         created_at = excluded.created_at, updated_at = excluded.updated_at,
         display_name = excluded.display_name, forked_from_session_id = excluded.forked_from_session_id,
         model = excluded.model, first_seq = excluded.first_seq, next_seq = excluded.next_seq,
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
  }
}
