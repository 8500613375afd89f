import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

// vitest.config.ts: the e2e project is the test files named *.e2e.test.ts, and only it checks
// that the build is current before running them. A test that runs the bundle (through the
// sluice-process helper) or a compiled dist/ module but is named otherwise would run against
// whatever build is lying around.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const USES_BUILD = /sluice-process\.js'|\/dist\//;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

test('every test file that runs the build output is named *.e2e.test.ts', () => {
  const tests = readdirSync(join(ROOT, 'packages')).flatMap((name) => {
    const dir = join(ROOT, 'packages', name, 'test');
    return readdirSync(join(ROOT, 'packages', name)).includes('test') ? testFiles(dir) : [];
  });
  const misnamed = tests
    .filter((path) => !path.endsWith('.e2e.test.ts') && USES_BUILD.test(readFileSync(path, 'utf8')))
    .map((path) => relative(ROOT, path));
  expect(misnamed).toEqual([]);
});
