import { SluiceError } from '@sluice/protocol';
import { NEWER_DATA_DIR_ADVICE, SchemaTooNewError } from '@sluice/store';

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
export class JournalSchemaTooNewError extends SchemaTooNewError<'journal_schema_too_new'> {
  readonly code = 'journal_schema_too_new';
  constructor(path: string, found: number, known: number) {
    super(path, found, known, 'Journal', NEWER_DATA_DIR_ADVICE);
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
