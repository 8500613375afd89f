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

/** An append or read on a journal that was closed. */
export class JournalClosedError extends SluiceError<'journal_closed'> {
  readonly code = 'journal_closed';
  readonly retryable = false;
  constructor(readonly path: string) {
    super(`Journal "${path}" is closed`);
  }
}
