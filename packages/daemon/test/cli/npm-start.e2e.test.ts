import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test } from 'vitest';

// README: "`npm start -- <flags>` passes flags to `sluice serve` … SIGTERM drains and exits 0".
// A process manager (systemd, docker, a CI runner) signals the npm process it started, which
// passes it to the shell running the start script; the daemon behind that shell must get it
// too, not be left running with the port held. The script runs as npm runs it (`sh -c`, the
// flags appended), with its build step left out: the suite has built already, and rebuilding
// would rewrite the bundle under the other tests' feet.
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../../..');
const dataDir = mkdtempSync(join(tmpdir(), 'sluice-npm-start-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function reachable(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/health`, { signal: AbortSignal.timeout(1_000) });
    return true;
  } catch {
    return false;
  }
}

test('`npm start` runs the daemon with its memory settings; SIGTERM to its shell drains and stops it', async () => {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  const script = scripts.start.replace('npm run build --silent', 'true');
  expect(script).not.toBe(scripts.start);
  const npm = spawn('sh', ['-c', `${script} --port 0 --data-dir ${dataDir}`], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  npm.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)));
  const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let stdout = '';
      npm.stdout.on('data', (chunk: Buffer) => {
        stdout += String(chunk);
        const match = /sluice listening on (http:\/\/\S+)/.exec(stdout);
        if (match) resolve(match[1]!);
      });
      void exited.then(() => reject(new Error(`npm start exited early: ${stderr}`)));
    });
    expect(await reachable(url)).toBe(true);
    // The shell execs the bin, whose `#!` line execs Node in the same process: its 2 MiB nursery
    // and two malloc arenas hold for what npm start runs (docs/decisions/030).
    expect(readFileSync(`/proc/${npm.pid}/cmdline`, 'utf8').split('\0')).toContain('--max-semi-space-size=2');
    expect(readFileSync(`/proc/${npm.pid}/environ`, 'utf8').split('\0')).toContain('MALLOC_ARENA_MAX=2');

    npm.kill('SIGTERM');
    await exited;
    const deadline = Date.now() + 15_000;
    while ((await reachable(url)) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await reachable(url)).toBe(false);
    expect(stderr).toContain('SIGTERM, draining');
  } finally {
    if (npm.exitCode === null) npm.kill('SIGKILL');
  }
}, 60_000);
