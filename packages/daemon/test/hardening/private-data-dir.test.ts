import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// Issue 19 item 5: the data directory holds every prompt and answer, so nothing in it may be
// readable by other users, whatever the umask — the WAL and shared-memory files SQLite creates
// later included.

let sluice: InProcessDaemon | undefined;
let dataDir: string;
afterEach(async () => {
  await sluice?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('every file a working daemon writes to its data directory is private to its owner', async () => {
  dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-private-')), 'data');
  sluice = await startInProcess({ dataDir });
  const created = await fetch(`${sluice.url}/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sessionScope: 'thread' }),
  });
  const { sessionId } = (await created.json()) as { sessionId: string };
  const prompt = await fetch(`${sluice.url}/session/${sessionId}/prompt`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: [{ type: 'text', text: 'secret plans' }] }),
  });
  expect(prompt.status).toBe(202);
  // The journal's WAL exists once the turn's model call is recorded (and goes at close).
  await expect.poll(() => fs.readdirSync(dataDir), { timeout: 10_000 }).toContain('journal.db-wal');

  expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
  const files = fs.readdirSync(dataDir);
  expect(files).toEqual(
    expect.arrayContaining(['journal.db', 'journal.db-shm', 'daemon.lock', 'daemon.pid']),
  );
  for (const file of files) expect.soft(fs.statSync(path.join(dataDir, file)).mode & 0o777, file).toBe(0o600);
});
