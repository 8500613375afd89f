import {
  DEFAULT_SESSION_LIST_SIZE,
  MAX_SESSION_LIST_SIZE,
  parseListCursor,
  type ListPosition,
} from '@sluice/store';
import { InvalidSessionCursorError } from './errors.js';
import { integerInRange } from '../validate.js';

// The listing's order and cursor are the stores' (`@sluice/store`); the sessions layer adds its
// error for a client's bad cursor and its validation of the page size.
export {
  DEFAULT_SESSION_LIST_SIZE,
  MAX_SESSION_LIST_SIZE,
  compareListPosition,
  encodeListCursor,
  type ListPosition,
} from '@sluice/store';

/** The position a cursor of `encodeListCursor` names; else {@link InvalidSessionCursorError}. */
export function decodeListCursor(cursor: unknown): ListPosition {
  const position = parseListCursor(cursor);
  if (position === undefined) throw new InvalidSessionCursorError(cursor);
  return position;
}

/** Validates a page size: an integer in [1, 1000]. */
export function listPageSize(size: number | undefined): number {
  return integerInRange('size', size ?? DEFAULT_SESSION_LIST_SIZE, 1, MAX_SESSION_LIST_SIZE);
}
