import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

/** Where Debian's `chromium` package puts the browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

const run = promisify(execFile);

/**
 * Makes sure Debian's `chromium` is installed, installing it with apt when it is missing (the
 * tests run as root on a Debian machine, as CI does). The first install takes minutes; later
 * calls return at once. Throws with apt's output when the install fails.
 */
export async function ensureChromium(): Promise<string> {
  if (existsSync(CHROMIUM_PATH)) return CHROMIUM_PATH;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const options = { env, maxBuffer: 64 * 1024 * 1024, timeout: 15 * 60_000 };
  try {
    await run('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], options).catch(
      async () => {
        // A stale package index is the usual cause: refresh it once and try again.
        await run('apt-get', ['update'], options);
        await run('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], options);
      },
    );
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(`could not install chromium with apt-get: ${stderr ?? String(error)}`, { cause: error });
  }
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(`apt-get installed chromium but ${CHROMIUM_PATH} is missing`);
  return CHROMIUM_PATH;
}
