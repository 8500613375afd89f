import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, test } from 'vitest';
import { api } from '../helpers/http-client.js';
import { logLines } from '../helpers/log-lines.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

// Issue 19 item 18: files written by a newer build give a clear start-up error and exit 1, not a
// 500 on every call; and /load and /resume take an id in upper case as create does.

let dataDir: string;
let sluice: SluiceProcess | undefined;
afterEach(async () => {
  await sluice?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test.each([
  ['session store', "UPDATE sluice_schema_migrations SET version = 99 WHERE component = 'daemon.sessions'"],
  ['journal', 'PRAGMA user_version = 99'],
])('a %s written by a newer build: the daemon says so and exits 1', async (_name, sql) => {
  dataDir = mkdtempSync(join(tmpdir(), 'sluice-newer-'));
  const first = await startSluice(['--data-dir', dataDir]);
  await api(first.url, 'POST', '/session', { body: {} }); // the files exist and are migrated
  await first.stop();
  const db = new Database(join(dataDir, 'journal.db'));
  db.exec(sql);
  db.close();

  sluice = await startSluice(['--data-dir', dataDir]);
  expect(await sluice.exited).toBe(1);
  const refusal = logLines(sluice.stderr()).find((line) => line['level'] === 50);
  expect(refusal?.['msg']).toMatch(
    /schema version 99, newer than .* this build knows: it was written by a newer Sluice/,
  );
});

test('/load and /resume accept a session id in upper case', async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'sluice-upper-'));
  const first = await startSluice(['--data-dir', dataDir]);
  const { sessionId } = (await api(first.url, 'POST', '/session', { body: { sessionScope: 'thread' } })).body;
  await first.stop();
  sluice = await startSluice(['--data-dir', dataDir]);
  const loaded = await api(sluice.url, 'POST', `/session/${String(sessionId).toUpperCase()}/load`, {
    body: {},
  });
  expect(loaded.status).toBe(200);
  expect(loaded.body.sessionId).toBe(sessionId);
  const resumed = await api(sluice.url, 'POST', `/session/${String(sessionId).toUpperCase()}/resume`, {
    body: {},
  });
  expect(resumed.body.sessionId).toBe(sessionId);
});
