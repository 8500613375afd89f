import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DaemonConfigError } from '../config.js';

/** The file in the data directory that names the daemon using it. */
export const LOCK_FILE = 'daemon.lock';

/** Lock files this process holds; one naming this process's pid but not listed is stale. */
const held = new Set<string>();

/**
 * Claims `dataDir` for one daemon. Two daemons on one directory would each save their copy of a
 * session over the other's, and turns would vanish from the stored history; so a second one is
 * refused at start-up with a `DaemonConfigError` of `dataDir` naming the holder's pid. A lock
 * left by a daemon that died (its pid no longer runs) is taken over. Returns the release, which
 * removes the file only while it still names this process.
 *
 * The pid check is per host: daemons in separate pid namespaces (containers) sharing a volume
 * cannot see each other's pids, and should not share a data directory.
 */
export function lockDataDir(dataDir: string): () => void {
  const path = join(dataDir, LOCK_FILE);
  const claim = `${path}.${process.pid}.${Date.now()}`;
  // Written whole under a private name, then linked into place: linking fails if the lock
  // exists, so no starter ever reads a lock file half written.
  writeFileSync(claim, `${process.pid}\n`);
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(claim, path);
        break;
      } catch (error) {
        if ((error as { code?: unknown }).code !== 'EEXIST') {
          throw new DaemonConfigError('dataDir', `cannot create "${path}" (${String(error)})`);
        }
      }
      const holder = holderOf(path);
      if (attempt > 0 || (holder !== undefined && isRunning(holder, path))) {
        throw new DaemonConfigError(
          'dataDir',
          `"${dataDir}" is in use by another Sluice daemon (pid ${holder ?? 'unknown'}); stop it or choose another --data-dir`,
        );
      }
      removeQuietly(path); // its daemon is gone
    }
  } finally {
    removeQuietly(claim);
  }
  held.add(path);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    held.delete(path);
    if (holderOf(path) === process.pid) removeQuietly(path);
  };
}

/** The pid a lock file names; undefined when it is gone or names none. */
function holderOf(path: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number.parseInt(text, 10);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

function isRunning(pid: number, path: string): boolean {
  if (pid === process.pid) return held.has(path);
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === 'EPERM'; // runs, under another user
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}
