import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DaemonConfigError } from '../config.js';
import { DATA_FILE_MODE, createPrivateFile } from './data-dir.js';

/** The file in the data directory whose lock marks the daemon using it. */
export const LOCK_FILE = 'daemon.lock';
/** Beside it, the pid of that daemon, for the message a second one gets. */
export const PID_FILE = 'daemon.pid';

/**
 * Claims `dataDir` for one daemon. Two daemons on one directory would each save their copy of a
 * session over the other's, and turns would vanish from the stored history; so a second one is
 * refused at start-up with a `DaemonConfigError` of `dataDir` naming the holder's pid.
 *
 * The claim is SQLite's write lock on `daemon.lock`, held by a transaction that stays open (an
 * advisory lock of the operating system on the file, not its contents): it covers every path to
 * the directory, two starters at the same instant get one winner, and the system drops it when
 * its process dies, so a killed daemon leaves nothing stale behind. Returns the release.
 */
export function lockDataDir(dataDir: string): () => void {
  createPrivateFile(join(dataDir, LOCK_FILE));
  const db = new Database(join(dataDir, LOCK_FILE));
  try {
    // The write lock of a transaction left open: one holder at a time, and no starter ever
    // needs another's read lock gone (as it would on its way to an exclusive lock, where two
    // starters could each wait for the other and both give up). A short wait rides out a
    // starter at the same instant that is still deciding.
    db.pragma('busy_timeout = 200');
    db.exec('BEGIN IMMEDIATE');
  } catch (error) {
    db.close();
    if ((error as { code?: unknown }).code !== 'SQLITE_BUSY') {
      throw new DaemonConfigError('dataDir', `cannot lock "${join(dataDir, LOCK_FILE)}" (${String(error)})`);
    }
    const holder = pidIn(join(dataDir, PID_FILE));
    throw new DaemonConfigError(
      'dataDir',
      `"${dataDir}" is in use by another Sluice daemon${holder === undefined ? '' : ` (pid ${holder})`}; stop it or choose another --data-dir`,
    );
  }
  const pidFile = join(dataDir, PID_FILE);
  writeFileSync(pidFile, `${process.pid}\n`, { mode: DATA_FILE_MODE });
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (pidIn(pidFile) === process.pid) {
      try {
        unlinkSync(pidFile);
      } catch {
        // already gone
      }
    }
    db.close();
  };
}

/** The pid a pid file names; undefined when it is gone or names none. */
function pidIn(path: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number.parseInt(text, 10);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}
