import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { buildInputs, staleBundleReason } from './bundle-freshness.js';

// Real files in a temporary tree, their modification times set explicitly (seconds since epoch).
let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'sluice-bundle-freshness-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function file(path: string, mtime: number): void {
  const full = join(root, path);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, '');
  utimesSync(full, mtime, mtime);
}

const BUNDLE = ['dist/bundle/sluice.js', 'dist/bundle/sluice.cjs'];
const SOURCES = ['packages/daemon/src', 'packages/runtime/src', 'scripts/bundle-daemon.js'];

test('a bundle written after every source is current', () => {
  file('packages/daemon/src/cli/program.ts', 1_000);
  file('packages/runtime/src/index.ts', 1_100);
  file('scripts/bundle-daemon.js', 900);
  file('dist/bundle/sluice.js', 2_000);
  file('dist/bundle/sluice.cjs', 2_000);
  expect(staleBundleReason(root, BUNDLE, SOURCES)).toBeUndefined();
});

test('a source edited after the build is named, with the command that rebuilds', () => {
  file('packages/daemon/src/persistence/sqlite-session-store.ts', 3_000);
  file('packages/runtime/src/index.ts', 2_500);
  file('dist/bundle/sluice.js', 2_000);
  file('dist/bundle/sluice.cjs', 2_000);
  expect(staleBundleReason(root, BUNDLE, SOURCES)).toBe(
    'e2e tests run the bundle dist/bundle/sluice.js; it is older than ' +
      'packages/daemon/src/persistence/sqlite-session-store.ts — run `npm run build`',
  );
});

test('the bundling script counts as a source', () => {
  file('packages/daemon/src/index.ts', 1_000);
  file('scripts/bundle-daemon.js', 3_000);
  file('dist/bundle/sluice.js', 2_000);
  file('dist/bundle/sluice.cjs', 2_000);
  expect(staleBundleReason(root, BUNDLE, SOURCES)).toContain('older than scripts/bundle-daemon.js');
});

test('the oldest file of the bundle decides', () => {
  file('packages/daemon/src/index.ts', 1_500);
  file('dist/bundle/sluice.js', 2_000);
  file('dist/bundle/sluice.cjs', 1_000);
  expect(staleBundleReason(root, BUNDLE, SOURCES)).toBe(
    'e2e tests run the bundle dist/bundle/sluice.cjs; it is older than packages/daemon/src/index.ts — run `npm run build`',
  );
});

test('a missing bundle is refused', () => {
  file('packages/daemon/src/index.ts', 1_000);
  file('dist/bundle/sluice.js', 2_000);
  expect(staleBundleReason(root, BUNDLE, SOURCES)).toBe(
    'e2e tests run the bundle dist/bundle/sluice.cjs; it is missing — run `npm run build`',
  );
});

test('a source written in the same instant as the bundle does not make it stale', () => {
  file('packages/daemon/src/index.ts', 2_000);
  file('dist/bundle/sluice.js', 2_000);
  file('dist/bundle/sluice.cjs', 2_000);
  expect(staleBundleReason(root, BUNDLE, SOURCES)).toBeUndefined();
});

test("an editor's swap, lock or backup file next to the sources is not a source", () => {
  file('packages/daemon/src/index.ts', 1_000);
  file('packages/daemon/src/.index.ts.swp', 3_000);
  file('packages/daemon/src/index.ts~', 3_000);
  file('packages/daemon/src/.#index.ts', 3_000);
  file('dist/bundle/sluice.js', 2_000);
  file('dist/bundle/sluice.cjs', 2_000);
  expect(staleBundleReason(root, BUNDLE, SOURCES)).toBeUndefined();
});

test("the build's inputs are every package's src, the web client and the bundling scripts", () => {
  for (const name of ['daemon', 'runtime']) mkdirSync(join(root, 'packages', name), { recursive: true });
  expect(buildInputs(root).sort()).toEqual(
    [
      join(root, 'packages/daemon/src'),
      join(root, 'packages/daemon/web'),
      join(root, 'packages/runtime/src'),
      join(root, 'scripts/bundle-daemon.js'),
      join(root, 'scripts/bundle-web.js'),
    ].sort(),
  );
});
