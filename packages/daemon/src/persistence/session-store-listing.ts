import type Database from 'better-sqlite3';
import {
  InvalidSessionCursorError,
  decodeListCursor,
  encodeListCursor,
  listPageSize,
  type ListPosition,
  type SessionListOptions,
  type SessionListPage,
} from '../sessions/index.js';
import { InvalidCursorError } from './errors.js';
import { toMetadata } from './session-record-codec.js';
import { SESSION_COLUMNS, type SessionRow } from './session-store-statements.js';

/**
 * The stored sessions of a workspace, a page at a time, newest first by `createdAt` then
 * `sessionId` (`ListPosition`): each page reads one row past its end to know whether a next
 * page exists, and the next page starts below the last row of this one.
 */
export class SessionStoreListing {
  private readonly firstPage: Database.Statement<[string, number], SessionRow>;
  private readonly nextPage: Database.Statement<[string, number, number, string, number], SessionRow>;

  constructor(db: Database.Database) {
    this.firstPage = db.prepare(
      `SELECT ${SESSION_COLUMNS} FROM sluice_sessions WHERE workspace_cwd = ?
       ORDER BY created_at DESC, session_id DESC LIMIT ?`,
    );
    this.nextPage = db.prepare(
      `SELECT ${SESSION_COLUMNS} FROM sluice_sessions
       WHERE workspace_cwd = ? AND (created_at < ? OR (created_at = ? AND session_id < ?))
       ORDER BY created_at DESC, session_id DESC LIMIT ?`,
    );
  }

  /** See {@link SqliteSessionStore.list}. */
  page(workspaceCwd: string, options: SessionListOptions): SessionListPage {
    const size = listPageSize(options.size);
    let rows: SessionRow[];
    if (options.cursor === undefined) rows = this.firstPage.all(workspaceCwd, size + 1);
    else {
      const { createdAt, sessionId } = decodeCursor(options.cursor);
      rows = this.nextPage.all(workspaceCwd, createdAt, createdAt, sessionId, size + 1);
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
}

function decodeCursor(cursor: string): ListPosition {
  try {
    return decodeListCursor(cursor);
  } catch (error) {
    if (error instanceof InvalidSessionCursorError) throw new InvalidCursorError(String(cursor));
    throw error;
  }
}
