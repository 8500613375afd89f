import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { startSluice, type SluiceProcess } from '../../daemon/test/helpers/sluice-process.js';

// The README's "TypeScript SDK" example, run as written against a real daemon.
const HERE = dirname(fileURLToPath(import.meta.url));
const GENERATED = join(HERE, '.readme-example.generated.ts');
let daemon: SluiceProcess;

beforeAll(async () => {
  daemon = await startSluice();
});
afterAll(async () => {
  rmSync(GENERATED, { force: true });
  await daemon?.stop();
});

function readmeExample(): string {
  const readme = readFileSync(join(HERE, '../../../README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## TypeScript SDK'));
  const match = /```ts\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error('README has no TypeScript SDK example');
  return match[1]!;
}

test('the README example creates a session, streams a turn and closes it', async () => {
  const source = readmeExample().replace("'http://127.0.0.1:4170'", JSON.stringify(daemon.url));
  writeFileSync(GENERATED, `${source}\nexport {};\n`);
  const out: string[] = [];
  const write = vi
    .spyOn(process.stdout, 'write')
    .mockImplementation((chunk) => (out.push(String(chunk)), true));
  const log = vi.spyOn(console, 'log').mockImplementation((...parts) => void out.push(parts.join(' ')));
  try {
    await import(/* @vite-ignore */ GENERATED);
  } finally {
    write.mockRestore();
    log.mockRestore();
  }
  expect(out.join('')).toContain('turn ended: end_turn');
  expect(out.join('').length).toBeGreaterThan('turn ended: end_turn'.length);
});
