import {
  DEFAULT_SESSION_LIST_SIZE,
  MAX_SESSION_LIST_SIZE,
  SESSION_COLUMNS,
  pageOfRows,
  parseListCursor,
  type ListPosition,
  type SessionListOptions,
  type SessionListPage,
  type SessionRow,
} from '@sluice/store';
import type { Sql } from 'postgres';

/**
 * The stored sessions of a workspace, a page at a time, newest first by `createdAt` then
 * `sessionId`, with the stores' cursor (`encodeListCursor`; the daemon validates a client's
 * cursor before it reaches the store). Reads one row past the page to know whether another
 * follows (`pageOfRows`).
 */
export async function listSessions(
  sql: Sql,
  workspaceCwd: string,
  options: SessionListOptions,
): Promise<SessionListPage> {
  const size = options.size ?? DEFAULT_SESSION_LIST_SIZE;
  if (!Number.isInteger(size) || size < 1 || size > MAX_SESSION_LIST_SIZE)
    throw new RangeError(`size must be an integer in [1, ${MAX_SESSION_LIST_SIZE}], got ${String(size)}`);
  const columns = sql.unsafe(SESSION_COLUMNS);
  let rows: readonly SessionRow[];
  if (options.cursor === undefined)
    rows = await sql<SessionRow[]>`
      SELECT ${columns} FROM sluice_sessions WHERE workspace_cwd = ${workspaceCwd}
      ORDER BY created_at DESC, session_id DESC LIMIT ${size + 1}`;
  else {
    const { createdAt, sessionId } = decodeCursor(options.cursor);
    rows = await sql<SessionRow[]>`
      SELECT ${columns} FROM sluice_sessions
      WHERE workspace_cwd = ${workspaceCwd}
        AND (created_at < ${createdAt} OR (created_at = ${createdAt} AND session_id < ${sessionId}))
      ORDER BY created_at DESC, session_id DESC LIMIT ${size + 1}`;
  }
  return pageOfRows(rows, size);
}

function decodeCursor(cursor: string): ListPosition {
  const position = parseListCursor(cursor);
  if (position !== undefined) return position;
  throw new RangeError(`cursor is not a session listing cursor, got ${JSON.stringify(cursor).slice(0, 80)}`);
}
