import { accessSync, closeSync, constants, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DaemonConfigError } from '../config.js';

/** The file in the data directory that holds the journal and the sessions. */
export const JOURNAL_FILE = 'journal.db';

/** The first 16 bytes of every SQLite database file. */
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

function refuse(message: string): DaemonConfigError {
  return new DaemonConfigError('dataDir', message);
}

function reason(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : String(error);
}

/**
 * Creates the data directory when missing and checks, without loading SQLite, that it can
 * hold the journal: a writable directory, and a `journal.db` that is absent, empty or a SQLite
 * file we may read and write (else a `DaemonConfigError` of `dataDir`). Returns the journal file's
 * path. This is what start-up needs to
 * refuse a bad `--data-dir` with a clear message while the file itself is opened on first use.
 */
export function prepareDataDir(dataDir: string): string {
  try {
    mkdirSync(dataDir, { recursive: true });
  } catch (error) {
    throw refuse(`cannot create directory "${dataDir}" (${reason(error)})`);
  }
  if (!statSync(dataDir).isDirectory()) throw refuse(`"${dataDir}" is not a directory`);
  try {
    accessSync(dataDir, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (error) {
    throw refuse(`directory "${dataDir}" is not writable (${reason(error)})`);
  }
  const path = join(dataDir, JOURNAL_FILE);
  const stats = statSync(path, { throwIfNoEntry: false });
  if (stats === undefined) return path;
  if (!stats.isFile()) throw refuse(`"${path}" is not a file`);
  try {
    accessSync(path, constants.R_OK | constants.W_OK);
  } catch (error) {
    throw refuse(`"${path}" is not readable and writable (${reason(error)})`);
  }
  if (stats.size > 0 && !hasSqliteHeader(path)) throw refuse(`"${path}" is not a SQLite database`);
  return path;
}

function hasSqliteHeader(path: string): boolean {
  const header = Buffer.alloc(SQLITE_HEADER.length);
  const fd = openSync(path, 'r');
  try {
    return readSync(fd, header, 0, header.length, 0) === header.length && header.equals(SQLITE_HEADER);
  } finally {
    closeSync(fd);
  }
}
