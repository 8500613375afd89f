import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { INITIALIZE, connectAcpHttp } from '../helpers/acp-client.js';
import { api, openEvents, textPrompt } from '../helpers/http-client.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// Issue 19 item 6: a daemon serving workspace B must not tell a client that a session of
// workspace A exists, nor where A is: every such request is a plain 404 session_not_found.
// And a cwd inside the workspace that is a symlink to elsewhere is outside it.

let dataDir: string;
let workspaceA: string;
let workspaceB: string;
let server: InProcessDaemon | undefined;

beforeEach(() => {
  const root = mkdtempSync(join(tmpdir(), 'sluice-cross-'));
  dataDir = join(root, 'data');
  workspaceA = join(root, 'secret-project-a');
  workspaceB = join(root, 'b');
  mkdirSync(workspaceA);
  mkdirSync(workspaceB);
});
afterEach(async () => {
  await server?.stop();
  server = undefined;
  rmSync(join(dataDir, '..'), { recursive: true, force: true });
});

/** A session of workspace A with one finished turn, stored; its daemon is stopped. */
async function sessionOfA(): Promise<string> {
  const a = await startInProcess({ dataDir, workspace: workspaceA });
  const { sessionId } = (await api(a.url, 'POST', '/session', { body: { sessionScope: 'thread' } })).body;
  const events = await openEvents(a.url, sessionId);
  await api(a.url, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt('hello') });
  await events.waitFor((f) => f.event === 'turn_complete');
  events.close();
  await a.stop();
  return sessionId as string;
}

function expectPlainNotFound(response: { status: number; body: unknown; text: string }): void {
  expect(response.status).toBe(404);
  expect(response.body).toMatchObject({ code: 'session_not_found' });
  expect(response.text).not.toContain('secret-project-a');
}

describe('a session of another workspace is not found, and its path is never named', () => {
  test('REST load, resume and create-with-that-id', async () => {
    const sessionId = await sessionOfA();
    server = await startInProcess({ dataDir, workspace: workspaceB });
    expectPlainNotFound(await api(server.url, 'POST', `/session/${sessionId}/load`, { body: {} }));
    expectPlainNotFound(await api(server.url, 'POST', `/session/${sessionId}/resume`, { body: {} }));
    expectPlainNotFound(await api(server.url, 'POST', '/session', { body: { sessionId } }));
  });

  test('ACP session/load', async () => {
    const sessionId = await sessionOfA();
    server = await startInProcess({ dataDir, workspace: workspaceB });
    const { connection } = connectAcpHttp(server.url);
    try {
      await connection.agent.request('initialize', INITIALIZE);
      const error = await connection.agent
        .request('session/load', { sessionId, cwd: workspaceB, mcpServers: [] })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: -32002, data: { errorKind: 'session_not_found' } });
      expect(JSON.stringify(error)).not.toContain('secret-project-a');
    } finally {
      connection.close();
    }
  });
});

test('a cwd that is a symlink inside the workspace to a directory outside it is refused', async () => {
  symlinkSync(workspaceA, join(workspaceB, 'link'));
  server = await startInProcess({ dataDir, workspace: workspaceB });
  const refused = await api(server.url, 'POST', '/session', { body: { cwd: join(workspaceB, 'link') } });
  expect(refused.status).toBe(400);
  expect(refused.body.code).toBe('workspace_mismatch');
  // A real directory inside is still fine, and so is a cwd that does not exist yet.
  mkdirSync(join(workspaceB, 'src'));
  const inside = await api(server.url, 'POST', '/session', { body: { cwd: join(workspaceB, 'src') } });
  expect(inside.status).toBe(200);
  const future = await api(server.url, 'POST', '/session', {
    body: { cwd: join(workspaceB, 'not-yet'), sessionScope: 'thread' },
  });
  expect(future.status).toBe(200);
});
