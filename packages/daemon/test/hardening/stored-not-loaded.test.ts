import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { api, textPrompt } from '../helpers/http-client.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// Issue 19 item 14: after a restart, a prompt for a session that is stored but not loaded was a
// bare 404 session_not_found. It still is a 404 with that code, and says to load it first.

let dir: string;
let server: InProcessDaemon | undefined;
afterEach(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a request for a stored session that is not loaded says to load it first', async () => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-stored-'));
  const first = await startInProcess({ dataDir: dir, workspace: dir });
  const { sessionId } = (await api(first.url, 'POST', '/session', { body: { sessionScope: 'thread' } })).body;
  await first.stop();
  server = await startInProcess({ dataDir: dir, workspace: dir });
  const refused = await api(server.url, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt('hi') });
  expect(refused.status).toBe(404);
  expect(refused.body).toMatchObject({ code: 'session_not_found', sessionId });
  expect(refused.body.error).toMatch(/stored but not loaded; load it with POST \/session\/.*\/load/);
  // An id nobody stored gets the plain answer.
  const unknown = await api(server.url, 'GET', '/session/00000000-0000-4000-8000-000000000000/status');
  expect(unknown.body.error).toBe('No session with id "00000000-0000-4000-8000-000000000000"');
  // Loaded, it serves.
  await api(server.url, 'POST', `/session/${sessionId}/load`, { body: {} });
  expect(
    (await api(server.url, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt('hi') })).status,
  ).toBe(202);
});
