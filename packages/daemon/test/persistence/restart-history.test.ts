import { randomUUID } from 'node:crypto';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createDaemon, type Daemon } from '../../src/daemon.js';
import { buildServer } from '../../src/http/server.js';
import { api, openEvents, textPrompt } from '../helpers/http-client.js';
import { storedMessages } from '../helpers/stored-session.js';

// Real restarts: one daemon lifetime runs turns on a data dir and is closed, the next one
// opens the same SQLite file. Real HTTP on 127.0.0.1, the echo provider, the built-in agent.
let dataDir: string;
let workspace: string;
let running: Array<{ stop(): Promise<void> }>;

beforeEach(() => {
  dataDir = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-rh-data-')));
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-rh-ws-')));
  running = [];
});

afterEach(async () => {
  for (const d of running.splice(0).reverse()) await d.stop().catch(() => {});
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

async function start(): Promise<{ url: string; daemon: Daemon; stop(): Promise<void> }> {
  const daemon = createDaemon({ dataDir, workspace, drainTimeoutMs: 2000, echoDelayMs: 1 });
  const app = buildServer(daemon, { hostname: '127.0.0.1' });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  let stopped: Promise<void> | undefined;
  const handle = {
    url: `http://127.0.0.1:${port}`,
    daemon,
    stop: () =>
      (stopped ??= (async () => {
        await daemon.close();
        app.server.closeAllConnections();
        await app.close();
      })()),
  };
  running.push(handle);
  return handle;
}

async function turn(url: string, sessionId: string, text: string): Promise<void> {
  const stream = await openEvents(url, sessionId);
  try {
    const res = await api(url, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt(text) });
    expect(res.status).toBe(202);
    const done = await stream.waitFor(
      (f) =>
        (f.event === 'turn_complete' || f.event === 'turn_error') && f.data.promptId === res.body.promptId,
    );
    expect(done.event).toBe('turn_complete');
  } finally {
    stream.close();
  }
}

describe('a session history survives a restart', () => {
  test('POST /session with the id of a stored (not live) session never wipes its history', async () => {
    const sessionId = randomUUID();
    const first = await start();
    const created = await api(first.url, 'POST', '/session', { body: { sessionId } });
    expect(created.status).toBe(200);
    await turn(first.url, sessionId, 'remember the blue door');
    await first.stop();

    // After a restart the session is stored but not live. A client that re-creates it by id
    // (as it did before the restart) must not silently replace the stored history.
    const second = await start();
    const again = await api(second.url, 'POST', '/session', { body: { sessionId } });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'session_id_conflict', sessionId, conflict: 'persisted' });
    // nothing was opened, and the way back in is a restore
    expect((await api(second.url, 'GET', `/session/${sessionId}/status`)).status).toBe(404);
    expect((await api(second.url, 'POST', `/session/${sessionId}/resume`, { body: {} })).status).toBe(200);
    await turn(second.url, sessionId, 'and the red key');
    await second.stop();

    expect(
      storedMessages(dataDir, sessionId)
        .filter((m) => m.role === 'user')
        .map((m) => m.content),
    ).toEqual(['remember the blue door', 'and the red key']);
  });

  test('POST /session with the id of a session closed in this lifetime does not wipe its history', async () => {
    const sessionId = randomUUID();
    const daemon = await start();
    expect((await api(daemon.url, 'POST', '/session', { body: { sessionId } })).status).toBe(200);
    await turn(daemon.url, sessionId, 'keep this');
    expect((await api(daemon.url, 'DELETE', `/session/${sessionId}`)).status).toBe(204);
    await expect
      .poll(async () => (await api(daemon.url, 'GET', `/session/${sessionId}/status`)).status)
      .toBe(404);
    await expect
      .poll(async () => (await api(daemon.url, 'POST', '/session', { body: { sessionId } })).status)
      .not.toBe(404);
    await daemon.stop();
    expect(storedMessages(dataDir, sessionId).map((m) => m.content)).toContain('keep this');
  });

  test("a second daemon on the same data dir is refused at start-up, so it cannot erase the first one's turns", async () => {
    const sessionId = randomUUID();
    const a = await start();
    expect((await api(a.url, 'POST', '/session', { body: { sessionId } })).status).toBe(200);
    await turn(a.url, sessionId, 'a1');
    // A second daemon started by mistake on the same --data-dir while the first runs.
    expect(() => createDaemon({ dataDir, workspace })).toThrow(
      new RegExp(`is in use by another Sluice daemon \\(pid ${process.pid}\\)`),
    );
    await turn(a.url, sessionId, 'a2');
    await a.stop();
    const users = storedMessages(dataDir, sessionId)
      .filter((m) => m.role === 'user')
      .map((m) => m.content);
    expect(users).toEqual(['a1', 'a2']);
    // Once the first one stopped, the directory is free again.
    const b = await start();
    expect((await api(b.url, 'POST', `/session/${sessionId}/resume`, { body: {} })).status).toBe(200);
  });

  test('a data file that was locked when first used works once the lock is gone (no restart needed)', async () => {
    // Another process holds the file's write lock (a migration, a VACUUM, a backup tool)
    // longer than the busy timeout at the moment the daemon first opens it.
    const holder = new Database(join(dataDir, 'journal.db'));
    holder.exec('CREATE TABLE other_tool (x)');
    holder.exec('BEGIN EXCLUSIVE');
    const daemon = await start();
    const created = await api(daemon.url, 'POST', '/session', { body: { sessionScope: 'thread' } });
    expect(created.status).toBe(200);
    const sessionId: string = created.body.sessionId;
    // (from the start of the session's events: the failed save may precede the subscription)
    const stream = await openEvents(daemon.url, sessionId, { headers: { 'last-event-id': '0' } });
    await stream.waitFor((f) => f.event === 'session_recording_degraded', 15_000);
    stream.close();
    holder.exec('COMMIT');
    holder.close();

    await turn(daemon.url, sessionId, 'after the lock');
    await daemon.stop();
    expect(storedMessages(dataDir, sessionId).map((m) => m.content)).toContain('after the lock');
  }, 30_000);
});
