import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { api } from '../../../daemon/test/helpers/http-client.js';
import { startInProcess, type InProcessDaemon } from '../../../daemon/test/helpers/in-process-daemon.js';
import { openPostgresFleet } from '../../src/index.js';
import { freshSchema, PG_URL, type TestSchema } from './pg-schema.js';

// One daemon of a fleet at a time runs a session (docs/fleet.md): the daemons here are real
// (in this process, over loopback HTTP) and share the real PostgreSQL store.

let schema: TestSchema;
let workspace: string;
const running: InProcessDaemon[] = [];

beforeAll(async () => {
  schema = await freshSchema('ownership');
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-ownership-ws-')));
});

afterAll(async () => {
  await Promise.allSettled(running.map((daemon) => daemon.stop()));
  await schema.drop();
  rmSync(workspace, { recursive: true, force: true });
});

async function daemonOnStore(advertiseUrl?: string): Promise<InProcessDaemon> {
  const fleet = await openPostgresFleet({
    url: PG_URL,
    schema: schema.name,
    ...(advertiseUrl === undefined ? {} : { advertiseUrl }),
  });
  const daemon = await startInProcess(
    { workspace },
    {
      storage: {
        journal: fleet.journal,
        store: fleet.store,
        budgets: fleet.budgets,
        recover: () => fleet.recover(),
        close: () => fleet.close(),
      },
    },
  );
  running.push(daemon);
  return daemon;
}

async function newSession(daemon: InProcessDaemon): Promise<string> {
  const created = await api(daemon.url, 'POST', '/session', { body: { sessionScope: 'thread' } });
  expect(created.status).toBe(200);
  // The session is stored (and claimed) by its first save, which the create does not wait for.
  await expect
    .poll(
      async () =>
        (await schema.sql`SELECT 1 FROM sluice_session_owners WHERE session_id = ${created.body.sessionId}`)
          .length,
    )
    .toBe(1);
  return created.body.sessionId as string;
}

describe('session ownership across daemons', () => {
  test('a load on another daemon while the owner has the session open is 409 naming the owner', async () => {
    const a = await daemonOnStore('http://a.sluice.test:4170');
    const b = await daemonOnStore();
    const sessionId = await newSession(a);
    const refused = await api(b.url, 'POST', `/session/${sessionId}/load`, { body: {} });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      code: 'session_owned_elsewhere',
      sessionId,
      owner: { url: 'http://a.sluice.test:4170' },
    });
    expect(refused.body.error).toContain('http://a.sluice.test:4170');
    // The owner itself attaches as ever.
    expect((await api(a.url, 'POST', `/session/${sessionId}/load`, { body: {} })).status).toBe(200);
  });

  test('a session closed on its daemon loads on another at once', async () => {
    const a = await daemonOnStore();
    const b = await daemonOnStore();
    const sessionId = await newSession(a);
    expect((await api(a.url, 'DELETE', `/session/${sessionId}`)).status).toBe(204);
    await expect
      .poll(async () => (await api(b.url, 'POST', `/session/${sessionId}/load`, { body: {} })).status)
      .toBe(200);
    // Now B has it: A is told so.
    expect((await api(a.url, 'POST', `/session/${sessionId}/load`, { body: {} })).status).toBe(409);
  });

  test('a daemon that stops frees its sessions for the others without waiting for its lease', async () => {
    const a = await daemonOnStore();
    const b = await daemonOnStore();
    const sessionId = await newSession(a);
    await a.stop();
    expect((await api(b.url, 'POST', `/session/${sessionId}/resume`, { body: {} })).status).toBe(200);
  });
});
