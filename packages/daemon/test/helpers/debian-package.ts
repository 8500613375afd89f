import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

/** Where Debian's `chromium` package puts the browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

const run = promisify(execFile);

/**
 * Makes sure the Debian package `name` that provides `path` is installed, installing it with
 * apt when it is missing (the tests run as root on a Debian machine, as CI does): a test that
 * needs a tool fails or runs, it never skips. The first install can take minutes; later calls
 * return at once. Throws with apt's output when the install fails.
 */
export async function ensureDebianPackage(path: string, name: string): Promise<string> {
  if (existsSync(path)) return path;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const options = { env, maxBuffer: 64 * 1024 * 1024, timeout: 15 * 60_000 };
  try {
    await run('apt-get', ['install', '-y', '--no-install-recommends', name], options).catch(async () => {
      // A stale package index is the usual cause: refresh it once and try again.
      await run('apt-get', ['update'], options);
      await run('apt-get', ['install', '-y', '--no-install-recommends', name], options);
    });
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(`could not install ${name} with apt-get: ${stderr ?? String(error)}`, { cause: error });
  }
  if (!existsSync(path)) throw new Error(`apt-get installed ${name} but ${path} is missing`);
  return path;
}

/** Debian's `chromium`, installed when missing (see {@link ensureDebianPackage}). */
export function ensureChromium(): Promise<string> {
  return ensureDebianPackage(CHROMIUM_PATH, 'chromium');
}
