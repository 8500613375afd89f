import { SluiceError, describeValue } from '@sluice/protocol';
/** Stable codes of the session store's errors. */
export type SessionStoreErrorCode =
  'session_store_closed' | 'session_store_schema_too_new' | 'invalid_cursor';

/** Base of every error the session store throws: a stable `code`, never a message to match. */
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
export class SessionStoreSchemaTooNewError extends SessionStoreError {
  readonly code = 'session_store_schema_too_new';
  readonly retryable = false;
  constructor(
    readonly path: string,
    readonly found: number,
    readonly known: number,
  ) {
    super(
      `Session store "${path}" has schema version ${found}, newer than the ${known} this build knows: it was written by a newer Sluice; run that one, or start this one with another --data-dir`,
    );
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
