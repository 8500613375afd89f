import { SluiceError } from '@sluice/protocol';
import { SchemaTooNewError } from '@sluice/store';

/** Stable codes of the PostgreSQL backend's errors. */
export type PostgresStoreErrorCode =
  | 'store_schema_too_new'
  | 'store_lease_lost'
  | 'store_unreachable'
  | 'session_owned_elsewhere'
  | 'session_store_closed';

/**
 * The database holds a Sluice schema newer than this build knows: it was migrated by a newer
 * Sluice. Nothing was changed; the daemon refuses to start (exit 1) rather than guess.
 */
export class StoreSchemaTooNewError extends SchemaTooNewError<'store_schema_too_new'> {
  readonly code = 'store_schema_too_new';
  constructor(
    readonly store: string,
    found: number,
    known: number,
  ) {
    super(
      store,
      found,
      known,
      'Store',
      'it was migrated by a newer Sluice; run that one, or point --store at another database or schema',
    );
  }
}

/**
 * This daemon's node lease is gone: another node found it expired and settled its calls and
 * sessions. Nothing more may be written in its name, so every later write fails with this.
 */
export class StoreLeaseLostError extends SluiceError<'store_lease_lost'> {
  readonly code = 'store_lease_lost';
  readonly retryable = false;
  constructor(
    readonly store: string,
    readonly nodeId: string,
  ) {
    super(
      `Store "${store}": the lease of node ${nodeId} expired and another node took over its calls and sessions; this daemon must restart`,
    );
  }
}

/** The database could not be reached or refused the connection at start-up. */
export class StoreUnreachableError extends SluiceError<'store_unreachable'> {
  readonly code = 'store_unreachable';
  readonly retryable = true;
  constructor(
    readonly store: string,
    reason: string,
    options?: ErrorOptions,
  ) {
    super(`Store "${store}" is unreachable: ${reason}`, options);
  }
}

/**
 * A save of a session that another live node owns: that node has it open, and this node's copy
 * is stale. Nothing was written (the daemon reports `session_recording_degraded`).
 */
export class SessionOwnedByOtherNodeError extends SluiceError<'session_owned_elsewhere'> {
  readonly code = 'session_owned_elsewhere';
  readonly retryable = false;
  constructor(
    readonly sessionId: string,
    readonly ownerNodeId: string,
  ) {
    super(`Session "${sessionId}" is owned by node ${ownerNodeId}; this node's save was refused`);
  }
}

/** A save, load or list on a store that was closed. */
export class StoreClosedError extends SluiceError<'session_store_closed'> {
  readonly code = 'session_store_closed';
  readonly retryable = false;
  constructor(readonly store: string) {
    super(`Session store "${store}" is closed`);
  }
}
