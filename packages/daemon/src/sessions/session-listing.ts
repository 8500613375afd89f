import { InvalidSessionCursorError } from './errors.js';
import { integerInRange } from '../validate.js';

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

/** The opaque `nextCursor` that continues a listing after `position`. */
export function encodeListCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.sessionId]), 'utf8').toString('base64url');
}

/** The position a cursor of {@link encodeListCursor} names; else {@link InvalidSessionCursorError}. */
export function decodeListCursor(cursor: unknown): ListPosition {
  if (typeof cursor === 'string' && cursor.length > 0 && cursor.length <= 1024) {
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
      // not JSON: reported below
    }
  }
  throw new InvalidSessionCursorError(cursor);
}

/** Validates a page size: an integer in [1, 1000]. */
export function listPageSize(size: number | undefined): number {
  return integerInRange('size', size ?? DEFAULT_SESSION_LIST_SIZE, 1, MAX_SESSION_LIST_SIZE);
}
