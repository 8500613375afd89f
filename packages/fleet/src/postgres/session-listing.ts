import type { Sql } from 'postgres';
import { SESSION_COLUMNS, toMetadata, type SessionRow } from './session-rows.js';
import type { SessionListOptions, SessionListPage } from './session-types.js';

const DEFAULT_SIZE = 20;
const MAX_SIZE = 1000;

/**
 * The stored sessions of a workspace, a page at a time, newest first by `createdAt` then
 * `sessionId`, with the daemon's cursor format (base64url of `[createdAt, sessionId]`; the daemon
 * validates a client's cursor before it reaches the store). Reads one row past the page to know
 * whether another follows.
 */
export async function listSessions(
  sql: Sql,
  workspaceCwd: string,
  options: SessionListOptions,
): Promise<SessionListPage> {
  const size = options.size ?? DEFAULT_SIZE;
  if (!Number.isInteger(size) || size < 1 || size > MAX_SIZE)
    throw new RangeError(`size must be an integer in [1, ${MAX_SIZE}], got ${String(size)}`);
  const columns = sql.unsafe(SESSION_COLUMNS);
  let rows: readonly (SessionRow & { n: string })[];
  if (options.cursor === undefined)
    rows = await sql<(SessionRow & { n: string })[]>`
      SELECT ${columns}, next_seq - first_seq AS n FROM sluice_sessions WHERE workspace_cwd = ${workspaceCwd}
      ORDER BY created_at DESC, session_id DESC LIMIT ${size + 1}`;
  else {
    const [createdAt, sessionId] = decodeCursor(options.cursor);
    rows = await sql<(SessionRow & { n: string })[]>`
      SELECT ${columns}, next_seq - first_seq AS n FROM sluice_sessions
      WHERE workspace_cwd = ${workspaceCwd}
        AND (created_at < ${createdAt} OR (created_at = ${createdAt} AND session_id < ${sessionId}))
      ORDER BY created_at DESC, session_id DESC LIMIT ${size + 1}`;
  }
  const page: SessionListPage = {
    sessions: rows.slice(0, size).map((row) => ({ ...toMetadata(row), messageCount: Number(row.n) })),
  };
  const last = rows.length > size ? rows[size - 1] : undefined;
  if (last !== undefined)
    page.nextCursor = Buffer.from(JSON.stringify([Number(last.created_at), last.session_id])).toString(
      'base64url',
    );
  return page;
}

function decodeCursor(cursor: string): [number, string] {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && Number.isFinite(value[0]) && typeof value[1] === 'string')
      return [value[0] as number, value[1]];
  } catch {
    // reported below
  }
  throw new RangeError(`cursor is not a session listing cursor, got ${JSON.stringify(cursor).slice(0, 80)}`);
}
