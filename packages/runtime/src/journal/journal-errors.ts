import { SluiceError } from '@sluice/protocol';

// The journal's errors, apart from the SQLite journal itself so that code which only needs to
// name them (the daemon's lazily opened journal) does not load SQLite.

/** A journal append that could not be made durable: the transaction or the writer thread failed. */
export class JournalWriteError extends SluiceError<'journal_write_failed'> {
  readonly code = 'journal_write_failed';
  readonly retryable = false;
  constructor(
    readonly path: string,
    message: string,
    readonly sqliteCode?: string,
    options?: ErrorOptions,
  ) {
    super(`Journal "${path}": ${sqliteCode ? `${sqliteCode}: ` : ''}${message}`, options);
  }
}

/** A journal file written by a newer build: this one refuses to open it rather than guess. */
export class JournalSchemaTooNewError extends SluiceError<'journal_schema_too_new'> {
  readonly code = 'journal_schema_too_new';
  readonly retryable = false;
  constructor(
    readonly path: string,
    readonly found: number,
    readonly known: number,
  ) {
    super(
      `Journal "${path}" has schema version ${found}, newer than the ${known} this build knows: it was written by a newer Sluice; run that one, or start this one with another --data-dir`,
    );
  }
}

/** An append or read on a journal that was closed. */
export class JournalClosedError extends SluiceError<'journal_closed'> {
  readonly code = 'journal_closed';
  readonly retryable = false;
  constructor(readonly path: string) {
    super(`Journal "${path}" is closed`);
  }
}
