import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

// The SDK must run in browsers: its tsconfig has `lib: DOM`, `types: []` and
// `noUncheckedSideEffectImports`, so `tsc -b packages/sdk` (npm run typecheck) fails on any
// Node-only import. This test pins the other half: the only packages src may import.
const SRC = join(dirname(fileURLToPath(import.meta.url)), '../src');
const ALLOWED = new Set(['@sluice/protocol', 'eventsource-parser']);

test('SDK sources import only relative files, @sluice/protocol and eventsource-parser', () => {
  const offenders: string[] = [];
  for (const file of readdirSync(SRC)) {
    const source = readFileSync(join(SRC, file), 'utf8');
    for (const match of source.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
      const specifier = match[1]!;
      if (!specifier.startsWith('./') && !ALLOWED.has(specifier)) offenders.push(`${file}: ${specifier}`);
    }
    if (/\bprocess\.|\bBuffer\b|\brequire\(/.test(source)) offenders.push(`${file}: Node global`);
  }
  expect(offenders).toEqual([]);
});

test('the SDK tsconfig is the browser one', () => {
  const config = JSON.parse(readFileSync(join(SRC, '../tsconfig.json'), 'utf8')) as {
    compilerOptions: { lib: string[]; types: string[]; noUncheckedSideEffectImports: boolean };
  };
  expect(config.compilerOptions.types).toEqual([]);
  expect(config.compilerOptions.lib).toContain('DOM');
  expect(config.compilerOptions.noUncheckedSideEffectImports).toBe(true);
});
