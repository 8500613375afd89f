import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { api } from '../helpers/http-client.js';
import { sessionWithTurns } from '../helpers/session-turns.js';
import { startSluice } from '../helpers/sluice-process.js';

const scratch = mkdtempSync(join(tmpdir(), 'sluice-purge-files-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** How often `marker` occurs in each file of the data directory (files without it omitted). */
function occurrences(dataDir: string, marker: string): Record<string, number> {
  const found: Record<string, number> = {};
  const needle = Buffer.from(marker);
  for (const name of readdirSync(dataDir)) {
    const path = join(dataDir, name);
    if (!existsSync(path)) continue;
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch {
      continue; // a folder or a file that went away between the listing and the read
    }
    let count = 0;
    for (let at = bytes.indexOf(needle); at !== -1; at = bytes.indexOf(needle, at + 1)) count++;
    if (count > 0) found[name] = count;
  }
  return found;
}

test('a purge answers only once no file of the data directory holds the session text, with the daemon running and after kill -9', async () => {
  const purged = 'purge-marker-7f3a91';
  const kept = 'kept-marker-c02e55';
  const dataDir = mkdtempSync(join(scratch, 'data-'));
  const sluice = await startSluice(['--data-dir', dataDir]);
  try {
    // Several turns: the history is saved (and rewritten) after each, the journal grows.
    const sessionId = await sessionWithTurns(
      sluice.url,
      Array.from({ length: 6 }, (_, i) => `${purged} turn ${i} ${'x'.repeat(2_000)}`),
    );
    await sessionWithTurns(sluice.url, [`${kept} ${'y'.repeat(2_000)}`]);
    expect(occurrences(dataDir, purged)).not.toEqual({});

    expect((await api(sluice.url, 'DELETE', `/session/${sessionId}?purge=true`)).status).toBe(204);
    // Read at once, while the daemon runs: the answer came after the text was gone.
    expect(occurrences(dataDir, purged)).toEqual({});
    // A kill -9 right after the answer leaves nothing either.
    await sluice.stop('SIGKILL');
    expect(occurrences(dataDir, purged)).toEqual({});
    // The other session's text stays.
    expect(Object.keys(occurrences(dataDir, kept)).length).toBeGreaterThan(0);
  } finally {
    await sluice.stop('SIGKILL');
  }
});
