import type { SessionListPage } from './session-record.js';
import { toMetadata, type SessionRow } from './session-record-codec.js';

/** Default page size of a session listing (the reference daemon's default). */
export const DEFAULT_SESSION_LIST_SIZE = 20;
/** Largest page size of a session listing (the official client never asks for more). */
export const MAX_SESSION_LIST_SIZE = 1000;

/**
 * Where a session sits in a listing: newest first by `createdAt`, ties by `sessionId`,
 * descending. Both never change, so paging neither repeats nor skips a session that exists
 * throughout, however active the sessions are meanwhile.
 */
export interface ListPosition {
  createdAt: number;
  sessionId: string;
}

/** Negative when `a` is listed before `b`. */
export function compareListPosition(a: ListPosition, b: ListPosition): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  return a.sessionId < b.sessionId ? 1 : a.sessionId > b.sessionId ? -1 : 0;
}

/** The opaque `nextCursor` that continues a listing after `position`: every store makes it so. */
export function encodeListCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.sessionId]), 'utf8').toString('base64url');
}

/** The position a cursor of {@link encodeListCursor} names, or `undefined` for anything else. */
export function parseListCursor(cursor: unknown): ListPosition | undefined {
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > 1024) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      Number.isFinite(value[0]) &&
      typeof value[1] === 'string'
    )
      return { createdAt: value[0] as number, sessionId: value[1] };
  } catch {
    // not JSON
  }
  return undefined;
}

/**
 * A listing page of `size` sessions from the rows a store read for it, newest first: a store
 * reads one row past the page (`size + 1`) to know whether a next page follows, and the next
 * page starts below the last row of this one.
 */
export function pageOfRows(rows: readonly SessionRow[], size: number): SessionListPage {
  const page: SessionListPage = {
    sessions: rows.slice(0, size).map((row) => ({
      ...toMetadata(row),
      messageCount: Number(row.next_seq) - Number(row.first_seq),
    })),
  };
  const last = rows.length > size ? rows[size - 1] : undefined;
  if (last !== undefined)
    page.nextCursor = encodeListCursor({ createdAt: Number(last.created_at), sessionId: last.session_id });
  return page;
}
