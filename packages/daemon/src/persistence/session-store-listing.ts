import { SESSION_COLUMNS, pageOfRows, type SessionRow } from '@sluice/store';
import type Database from 'better-sqlite3';
import {
  InvalidSessionCursorError,
  decodeListCursor,
  listPageSize,
  type ListPosition,
  type SessionListOptions,
  type SessionListPage,
} from '../sessions/index.js';
import { InvalidCursorError } from './errors.js';

/**
 * The stored sessions of a workspace, a page at a time, newest first by `createdAt` then
 * `sessionId` (`ListPosition`): each page reads one row past its end to know whether a next
 * page exists, and the next page starts below the last row of this one (`pageOfRows`).
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
    return pageOfRows(rows, size);
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
