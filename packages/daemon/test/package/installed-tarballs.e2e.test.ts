import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

// What a user gets from `npm pack` (docs/decisions/041): the daemon's tarball installed with
// `npm install -g` into a scratch prefix gives a `sluice` on PATH that serves; the SDK's tarball
// installed into a scratch project imports, typechecks and drives one prompt to turn_complete.
// Nothing of the checkout is reachable from there but better-sqlite3's compiled addon, handed to
// its own install script as a local prebuild instead of compiling the same source for minutes.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'sluice-tarballs-'));
const prefix = join(work, 'prefix');
const app = join(work, 'app');
const env = { ...process.env, PATH: `${join(prefix, 'bin')}${delimiter}${process.env.PATH ?? ''}` };
let daemon: SluiceProcess | undefined;

/** `npm` with the install flags every step shares: the npm cache first, no audit, scripts shown. */
async function npm(args: string[], cwd: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<string> {
  const { stdout } = await run('npm', [...args, '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd,
    env: { ...env, ...extraEnv },
    timeout: 90_000,
  });
  return stdout;
}

/** better-sqlite3's addon from the checkout, laid out as prebuild-install looks for it. */
async function localPrebuilds(): Promise<string> {
  const dir = join(work, 'prebuilds');
  mkdirSync(dir);
  const { version } = (await import('better-sqlite3/package.json', { with: { type: 'json' } })).default;
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await run('tar', ['czf', join(dir, name), 'build/Release/better_sqlite3.node'], {
    cwd: join(ROOT, 'node_modules/better-sqlite3'),
  });
  return dir;
}

beforeAll(async () => {
  const tarballs = join(work, 'tarballs');
  mkdirSync(tarballs);
  await npm(['pack', '--pack-destination', tarballs, '-w', 'packages/daemon', '-w', 'packages/sdk'], ROOT);
  const packed = readdirSync(tarballs);
  const tarball = (name: string): string =>
    join(
      tarballs,
      packed.find((file) => file.startsWith(name))!,
    );
  await npm(
    ['install', '-g', '--prefix', prefix, '--allow-scripts=better-sqlite3', tarball('sluice-daemon-')],
    work,
    { npm_config_better_sqlite3_local_prebuilds: await localPrebuilds() },
  );
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  await npm(['install', tarball('sluice-sdk-')], app);
}, 180_000);

afterAll(async () => {
  await daemon?.stop();
  rmSync(work, { recursive: true, force: true });
});

test('the daemon tarball depends on better-sqlite3 alone and installs a working sluice on PATH', async () => {
  const installed = join(prefix, 'lib/node_modules/@sluice/daemon');
  const manifest = (await import(join(installed, 'package.json'), { with: { type: 'json' } })).default as {
    version: string;
    dependencies: Record<string, string>;
  };
  expect(Object.keys(manifest.dependencies)).toEqual(['better-sqlite3']);
  const { stdout } = await run('sluice', ['--version'], { env, timeout: 30_000 });
  expect(stdout.trim()).toBe(manifest.version);
});

test('an installed SDK drives one prompt on the installed sluice to turn_complete', async () => {
  daemon = await startSluice([], env, 'sluice');
  writeFileSync(
    join(app, 'prompt.mjs'),
    `import { DaemonClient, DaemonSessionClient } from '@sluice/sdk';
const client = new DaemonClient({ baseUrl: process.argv[2] });
const session = await DaemonSessionClient.createOrAttach(client, { sessionScope: 'thread' });
const types = [];
const stop = new AbortController();
const streaming = (async () => {
  for await (const event of session.events({ signal: stop.signal })) {
    types.push(event.type);
    if (event.type === 'turn_complete') return;
  }
})();
const result = await session.prompt({ prompt: [{ type: 'text', text: 'Hello' }] });
await streaming;
stop.abort();
await session.close();
console.log(JSON.stringify({ stopReason: result.stopReason, types }));
`,
  );
  const { stdout } = await run(process.execPath, ['prompt.mjs', daemon.url], {
    cwd: app,
    env,
    timeout: 30_000,
  });
  const outcome = JSON.parse(stdout) as { stopReason: string; types: string[] };
  expect(outcome.stopReason).toBe('end_turn');
  expect(outcome.types).toContain('session_update');
  expect(outcome.types.at(-1)).toBe('turn_complete');
});

test("the installed SDK's declarations resolve without @sluice/protocol installed", async () => {
  writeFileSync(
    join(app, 'check.ts'),
    `import { DaemonClient, type PromptResult } from '@sluice/sdk';
export const client: DaemonClient = new DaemonClient({ baseUrl: 'http://127.0.0.1:4170' });
export const reason: PromptResult['stopReason'] = 'end_turn';
`,
  );
  // no @types: the SDK needs only fetch and the DOM's streams, as in a browser
  const compilerOptions = {
    noEmit: true,
    strict: true,
    module: 'nodenext',
    lib: ['es2022', 'dom'],
    types: [],
  };
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['check.ts'] }));
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  await expect(run(process.execPath, [tsc, '-p', '.'], { cwd: app, env })).resolves.toBeDefined();
});

test('the installed sluice serves /docs with the Swagger UI files it ships', async () => {
  daemon ??= await startSluice([], env, 'sluice');
  for (const [path, type] of [
    ['/docs', 'text/html'],
    ['/docs/start.js', 'text/javascript'],
    ['/docs/swagger-ui-bundle.js', 'text/javascript'],
    ['/docs/swagger-ui.css', 'text/css'],
  ] as const) {
    const answer = await fetch(`${daemon.url}${path}`);
    expect(answer.status, path).toBe(200);
    expect(answer.headers.get('content-type'), path).toContain(type);
    expect((await answer.text()).length, path).toBeGreaterThan(100);
  }
});
