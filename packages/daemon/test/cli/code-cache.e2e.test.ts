import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';

// The compiled module, as the installed launcher runs it: each run is a fresh Node process,
// because installing the cache changes how that process compiles CommonJS.
const codeCache = fileURLToPath(new URL('../../dist/cli/code-cache.js', import.meta.url));

let dir: string;
let cacheDir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-code-cache-'));
  cacheDir = join(dir, '.code-cache');
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `dir/app.cjs` exporting `value` (with a hashbang, as the bundle has). */
function writeApp(value: string): void {
  writeFileSync(join(dir, 'app.cjs'), `#!/usr/bin/env node\nexports.value = ${JSON.stringify(value)};\n`);
}

/** Loads `app.cjs` (and `elsewhere`, a file the cache must leave alone) in a fresh process. */
function run(elsewhere?: string): {
  value: string;
  stats: { accepted: number; compiled: number; written: number };
} {
  const script = `
    import { createRequire } from 'node:module';
    import { installCodeCache } from ${JSON.stringify(codeCache)};
    const stats = installCodeCache({ dir: ${JSON.stringify(dir)}, cacheDir: ${JSON.stringify(cacheDir)}, writeDelayMs: 0 });
    const require = createRequire(${JSON.stringify(join(dir, 'x.js'))});
    const { value } = require('./app.cjs');
    ${elsewhere ? `require(${JSON.stringify(elsewhere)});` : ''}
    setTimeout(() => console.log(JSON.stringify({ value, stats })), 50);
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  return JSON.parse(out) as ReturnType<typeof run>;
}

function caches(): string[] {
  return readdirSync(cacheDir);
}

describe('V8 code cache of the bundled CLI', () => {
  test('the first start compiles and writes a private cache; the next start is compiled from it', () => {
    writeApp('one');
    expect(run()).toEqual({ value: 'one', stats: { accepted: 0, compiled: 1, written: 1 } });
    expect(caches()).toHaveLength(1);
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(cacheDir, caches()[0]!)).mode & 0o777).toBe(0o600);
    expect(run()).toEqual({ value: 'one', stats: { accepted: 1, compiled: 0, written: 0 } });
  });

  test('an edited file of the same length never runs from the old cache, which is then removed', () => {
    writeApp('one');
    run();
    const old = caches();
    writeApp('two'); // V8 alone checks only the length of the source
    expect(run()).toEqual({ value: 'two', stats: { accepted: 0, compiled: 1, written: 1 } });
    expect(caches()).toHaveLength(1);
    expect(caches()).not.toEqual(old);
  });

  test('a damaged cache is refused by V8 and replaced; the code still runs', () => {
    writeApp('one');
    run();
    writeFileSync(join(cacheDir, caches()[0]!), Buffer.alloc(4096, 7));
    expect(run()).toEqual({ value: 'one', stats: { accepted: 0, compiled: 1, written: 1 } });
    expect(run().stats.accepted).toBe(1);
  });

  test('files outside its directory are compiled by Node as usual', () => {
    writeApp('one');
    const other = mkdtempSync(join(tmpdir(), 'sluice-code-cache-other-'));
    try {
      writeFileSync(join(other, 'lib.cjs'), 'module.exports = 1;\n');
      expect(run(join(other, 'lib.cjs')).stats).toEqual({ accepted: 0, compiled: 1, written: 1 });
      expect(caches()).toEqual([expect.stringMatching(/^app\.cjs-[0-9a-f]{32}\.bin$/)]);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  test('an unwritable cache directory only costs the speed-up', () => {
    writeApp('one');
    writeFileSync(cacheDir, 'a file where the directory should be');
    expect(run()).toEqual({ value: 'one', stats: { accepted: 0, compiled: 1, written: 0 } });
  });
});
