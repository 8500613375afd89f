import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { INITIALIZE, connectAcpHttp } from '../helpers/acp-client.js';
import { api, openEvents, textPrompt } from '../helpers/http-client.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

let dir: string;
let server: InProcessDaemon | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-acp-load-'));
});

afterEach(async () => {
  await server?.stop();
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** A session with one finished turn, stored in `dir`, in a daemon that is then stopped. */
async function storedSession(): Promise<string> {
  const first = await startInProcess({ dataDir: dir, workspace: dir });
  const { sessionId } = (await api(first.url, 'POST', '/session', { body: { sessionScope: 'thread' } })).body;
  const events = await openEvents(first.url, sessionId);
  await api(first.url, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt('remember me') });
  await events.waitFor((f) => f.event === 'turn_complete');
  events.close();
  await first.stop();
  return sessionId as string;
}

describe('ACP session/load and session/resume after a restart (PROTOCOL §4, §8)', () => {
  test('§8 session/load of a stored session streams its history as session/update, then answers', async () => {
    const sessionId = await storedSession();
    server = await startInProcess({ dataDir: dir, workspace: dir });
    const { connection, log } = connectAcpHttp(server.url);
    try {
      await connection.agent.request('initialize', INITIALIZE);
      // The SDK client opens the session stream before the session is live again.
      await expect(
        connection.agent.request('session/load', { sessionId, cwd: dir, mcpServers: [] }),
      ).resolves.toEqual({});
      await expect
        .poll(() => log.updates.filter((u) => u.sessionId === sessionId).map((u) => u.update.sessionUpdate))
        .toEqual(['user_message_chunk', 'agent_message_chunk']);
      const first = log.updates[0]?.update as { content?: { text?: string } };
      expect(first.content?.text).toBe('remember me');
      const answer = await connection.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: 'and now?' }],
      });
      expect(answer).toEqual({ stopReason: 'end_turn' });
    } finally {
      connection.close();
    }
  });

  test('§8 session/resume of a stored session answers without replaying it', async () => {
    const sessionId = await storedSession();
    server = await startInProcess({ dataDir: dir, workspace: dir });
    const { connection, log } = connectAcpHttp(server.url);
    try {
      await connection.agent.request('initialize', INITIALIZE);
      await expect(connection.agent.request('session/resume', { sessionId, cwd: dir })).resolves.toEqual({});
      await connection.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: 'again' }],
      });
      expect(
        log.updates.map((u) => (u.update as { content?: { text?: string } }).content?.text),
      ).not.toContain('remember me');
    } finally {
      connection.close();
    }
  });

  test('§8 / issue 19 item 16: session/list after a restart includes the stored sessions, as REST does', async () => {
    const sessionId = await storedSession();
    server = await startInProcess({ dataDir: dir, workspace: dir });
    const { connection } = connectAcpHttp(server.url);
    try {
      await connection.agent.request('initialize', INITIALIZE);
      const page = (await connection.agent.request('session/list', { cwd: dir })) as {
        sessions: Array<{ sessionId: string }>;
      };
      expect(page.sessions.map((session) => session.sessionId)).toContain(sessionId);
    } finally {
      connection.close();
    }
  });

  test('§8 session/load of an unknown session → -32002 session_not_found', async () => {
    server = await startInProcess({ dataDir: dir, workspace: dir });
    const { connection } = connectAcpHttp(server.url);
    try {
      await connection.agent.request('initialize', INITIALIZE);
      const error = await connection.agent
        .request('session/load', {
          sessionId: '00000000-0000-4000-8000-000000000000',
          cwd: dir,
          mcpServers: [],
        })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: -32002, data: { errorKind: 'session_not_found' } });
    } finally {
      connection.close();
    }
  });
});
