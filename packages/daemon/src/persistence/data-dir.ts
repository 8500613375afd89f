import {
  accessSync,
  chmodSync,
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readSync,
  statSync,
  type Stats,
} from 'node:fs';
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

/** Mode of a data directory Sluice creates: only its owner may list or enter it. */
export const DATA_DIR_MODE = 0o700;
/** Mode of the files in it (journal, WAL, lock): they hold every prompt and answer. */
export const DATA_FILE_MODE = 0o600;
/** Permission bits that let someone other than the owner change the directory. */
const WRITABLE_BY_OTHERS = 0o022;

/**
 * Creates the data directory when missing (mode 0700) and checks, without loading SQLite, that
 * it can hold the journal: a writable directory that nobody else may write to, and a
 * `journal.db` that is absent, empty or a SQLite file we may read and write (else a
 * `DaemonConfigError` of `dataDir`). A missing `journal.db` is created empty with mode 0600, so
 * that SQLite, which gives its WAL and shared-memory files the database file's mode, never
 * creates a file others can read; an existing one is narrowed to 0600. Returns the journal
 * file's path. This is what start-up needs to refuse a bad `--data-dir` with a clear message
 * while the file itself is opened on first use.
 */
export function prepareDataDir(dataDir: string): string {
  try {
    mkdirSync(dataDir, { recursive: true, mode: DATA_DIR_MODE });
  } catch (error) {
    throw refuse(`cannot create directory "${dataDir}" (${reason(error)})`);
  }
  checkDirectory(dataDir, statSync(dataDir));
  const path = join(dataDir, JOURNAL_FILE);
  const stats = statSync(path, { throwIfNoEntry: false });
  if (stats === undefined) {
    createPrivateFile(path);
    return path;
  }
  if (!stats.isFile()) throw refuse(`"${path}" is not a file`);
  narrowToOwner(path, stats);
  try {
    accessSync(path, constants.R_OK | constants.W_OK);
  } catch (error) {
    throw refuse(`"${path}" is not readable and writable (${reason(error)})`);
  }
  if (stats.size > 0 && !hasSqliteHeader(path)) throw refuse(`"${path}" is not a SQLite database`);
  return path;
}

function checkDirectory(dataDir: string, stats: Stats): void {
  if (!stats.isDirectory()) throw refuse(`"${dataDir}" is not a directory`);
  if ((stats.mode & WRITABLE_BY_OTHERS) !== 0) {
    const mode = (stats.mode & 0o777).toString(8).padStart(3, '0');
    throw refuse(
      `directory "${dataDir}" is writable by other users (mode ${mode}), and it holds every prompt and answer; run chmod 700 on it or choose another --data-dir`,
    );
  }
  try {
    accessSync(dataDir, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (error) {
    throw refuse(`directory "${dataDir}" is not writable (${reason(error)})`);
  }
}

/** Creates an empty file only its owner may read, unless one appeared meanwhile. */
export function createPrivateFile(path: string): void {
  try {
    closeSync(openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, DATA_FILE_MODE));
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'EEXIST')
      throw refuse(`cannot create "${path}" (${reason(error)})`);
  }
}

/** Takes group and other permissions off a file of ours (a journal from an older build). */
function narrowToOwner(path: string, stats: Stats): void {
  if ((stats.mode & 0o077) === 0 || stats.uid !== process.getuid?.()) return;
  try {
    chmodSync(path, stats.mode & DATA_FILE_MODE);
  } catch (error) {
    throw refuse(`cannot make "${path}" private (${reason(error)})`);
  }
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
