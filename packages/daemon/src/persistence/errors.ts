import { SluiceError, describeValue } from '@sluice/protocol';
import { NEWER_DATA_DIR_ADVICE, SchemaTooNewError } from '@sluice/store';

/** Stable codes of the session store's errors. */
export type SessionStoreErrorCode =
  'session_store_closed' | 'session_store_schema_too_new' | 'invalid_cursor';

/**
 * Base of the errors the session store throws in use: a stable `code`, never a message to match.
 * A file too new to open is a {@link SessionStoreSchemaTooNewError}, like every store's.
 */
export abstract class SessionStoreError extends SluiceError<SessionStoreErrorCode> {}

/** A save, load or list on a store that was closed. */
export class SessionStoreClosedError extends SessionStoreError {
  readonly code = 'session_store_closed';
  readonly retryable = false;
  constructor(readonly path: string) {
    super(`Session store "${path}" is closed`);
  }
}

/** The database holds a session schema newer than this build knows; nothing was changed. */
export class SessionStoreSchemaTooNewError extends SchemaTooNewError<'session_store_schema_too_new'> {
  readonly code = 'session_store_schema_too_new';
  constructor(path: string, found: number, known: number) {
    super(path, found, known, 'Session store', NEWER_DATA_DIR_ADVICE);
  }
}

/** A listing cursor that this store did not hand out (HTTP `400`). */
export class InvalidCursorError extends SessionStoreError {
  readonly code = 'invalid_cursor';
  readonly retryable = false;
  constructor(readonly cursor: string) {
    super(`Invalid session listing cursor ${describeValue(cursor, 64)}`);
  }
}
