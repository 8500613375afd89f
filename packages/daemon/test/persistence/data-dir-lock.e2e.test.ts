import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { DaemonConfigError } from '../../src/config.js';
import { createDaemon, type Daemon } from '../../src/daemon.js';

// One daemon per data directory (docs/decisions/006): real files, real child processes.
let root: string;
let workspace: string;
let daemons: Daemon[];

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-lock-')));
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-lock-ws-')));
  daemons = [];
});

afterEach(async () => {
  for (const d of daemons.splice(0).reverse()) await d.close().catch(() => {});
  rmSync(root, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

const LOCK_MODULE = fileURLToPath(new URL('../../dist/persistence/data-dir-lock.js', import.meta.url));

/**
 * A process that claims `dir` when the clock reaches `startAt`, prints `won` or `lost`, and
 * holds what it won until it is killed or `holdMs` passed.
 */
function claimant(dir: string, startAt: number, holdMs: number) {
  const code = `
    const [dir, startAt, holdMs] = process.argv.slice(1);
    const { lockDataDir } = await import(${JSON.stringify(LOCK_MODULE)});
    while (Date.now() < Number(startAt)) {}
    try { const release = lockDataDir(dir); process.stdout.write('won'); setTimeout(release, Number(holdMs)); }
    catch (error) { process.stdout.write('lost: ' + error.message); }`;
  const child = spawn(process.execPath, [
    '--input-type=module',
    '-e',
    code,
    dir,
    String(startAt),
    String(holdMs),
  ]);
  let out = '';
  const said = new Promise<string>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      resolve(out);
    });
    child.on('exit', () => resolve(out));
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return { child, said, exited };
}

describe('one daemon per data directory', () => {
  test('a second daemon on the same directory, even through a symlink, is refused naming the first one', async () => {
    const real = join(root, 'data');
    const alias = join(root, 'alias');
    daemons.push(createDaemon({ dataDir: real, workspace }));
    symlinkSync(real, alias);
    for (const dataDir of [real, alias]) {
      expect(() => createDaemon({ dataDir, workspace })).toThrow(DaemonConfigError);
      expect(() => createDaemon({ dataDir, workspace })).toThrow(`(pid ${process.pid})`);
    }
    await daemons.pop()!.close();
    expect(existsSync(join(real, 'daemon.pid'))).toBe(false);
    daemons.push(createDaemon({ dataDir: alias, workspace })); // free again once the first closed
  });

  test('of daemons started at the same instant, exactly one gets the directory', async () => {
    for (let round = 0; round < 4; round++) {
      const dir = join(root, `d${round}`);
      mkdirSync(dir);
      const startAt = Date.now() + 600;
      // Winners hold the directory until every claimant has spoken: on a loaded machine one may
      // start late, and it must still find the directory taken (a winner that let go after a
      // fixed time let a late one win in CI).
      const claims = Array.from({ length: 6 }, () => claimant(dir, startAt, 60_000));
      const said = await Promise.all(claims.map((c) => c.said));
      for (const c of claims) c.child.kill('SIGKILL');
      await Promise.all(claims.map((c) => c.exited));
      expect(
        said.filter((s) => s === 'won'),
        `round ${round}: ${JSON.stringify(said)}`,
      ).toHaveLength(1);
    }
  }, 60_000);

  test('a daemon that was killed leaves nothing behind that keeps the next one out', async () => {
    const dir = join(root, 'data');
    mkdirSync(dir);
    const holder = claimant(dir, 0, 60_000);
    expect(await holder.said).toBe('won');
    expect(() => createDaemon({ dataDir: dir, workspace })).toThrow(`(pid ${holder.child.pid})`);
    holder.child.kill('SIGKILL');
    await holder.exited;
    daemons.push(createDaemon({ dataDir: dir, workspace }));
  });
});
