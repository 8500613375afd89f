import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { api, textPrompt } from '../../../daemon/test/helpers/http-client.js';
import { SLUICE_MAIN, startSluice } from '../../../daemon/test/helpers/sluice-process.js';

// docs/architecture.md: only the CLI wires a fleet backend in, so a single-node daemon never loads a
// PostgreSQL (or Redis) client. The bundle keeps @sluice/fleet in a chunk of its own; a daemon
// started without --store serves a prompt and stops without having required it.

const dir = mkdtempSync(join(tmpdir(), 'sluice-no-client-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The bundle's chunk that holds the PostgreSQL backend (it has the journal's SQL). */
function fleetChunk(): string {
  const bundle = dirname(SLUICE_MAIN);
  const chunk = readdirSync(bundle).find(
    (name) =>
      name.endsWith('.cjs') &&
      readFileSync(join(bundle, name), 'utf8').includes('INSERT INTO sluice_journal_records'),
  );
  if (chunk === undefined) throw new Error(`no chunk of ${bundle} holds the PostgreSQL journal`);
  return join(bundle, chunk);
}

test('a daemon without --store serves a prompt and never loads the PostgreSQL backend', async () => {
  const loaded = join(dir, 'loaded.json');
  const hook = join(dir, 'record-modules.cjs');
  writeFileSync(
    hook,
    `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(loaded)}, JSON.stringify(Object.keys(require.cache))));\n`,
  );
  const sluice = await startSluice([], { NODE_OPTIONS: `--require ${hook}` });
  const { body } = await api(sluice.url, 'POST', '/session', { body: {} });
  expect(
    (await api(sluice.url, 'POST', `/session/${body.sessionId}/prompt`, { body: textPrompt('hi') })).status,
  ).toBe(202);
  expect(await sluice.stop()).toBe(0);
  const modules = JSON.parse(readFileSync(loaded, 'utf8')) as string[];
  expect(modules.some((path) => path.endsWith('sluice.cjs'))).toBe(true); // the hook saw the bundle load
  expect(modules).not.toContain(fleetChunk());
  expect(modules.filter((path) => /node_modules[\\/](postgres|ioredis)[\\/]/.test(path))).toEqual([]);
});
