import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { api, openEvents, textPrompt } from '../../../daemon/test/helpers/http-client.js';
import { startSluice, type SluiceProcess } from '../../../daemon/test/helpers/sluice-process.js';
import { until } from '../../../daemon/test/helpers/until.js';
import { freshSchema, PG_URL, type TestSchema } from './pg-schema.js';

// Issue 21 part 2: two bundled daemons share one `--store postgres://…`. A session created on
// node A is refused on node B while A lives (409 naming A); A is killed with SIGKILL under load;
// B then loads the session with its history, ends the prompts A accepted and never ended, and
// settles A's open model calls: every call has exactly one request row and one result row.

const ECHO_DELAY_MS = 1500;
const LEASE_MS = 1500;
const SESSIONS = 2;

let schema: TestSchema;
let workspace: string;
let nodeA: SluiceProcess | undefined;
let nodeB: SluiceProcess | undefined;
let urlA: string;
const sessionIds: string[] = [];
const unfinished = new Map<string, string[]>();
let refusedWhileAlive: { status: number; body: Record<string, unknown> } | undefined;

/** A port free now, so that the daemon can be told its own URL (`--advertise-url`). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startNode(): Promise<SluiceProcess> {
  const port = await freePort();
  return startSluice([
    '--port',
    String(port),
    '--workspace',
    workspace,
    '--echo-delay-ms',
    String(ECHO_DELAY_MS),
    '--store',
    `${PG_URL}?search_path=${schema.name}`,
    '--store-lease-ms',
    String(LEASE_MS),
    '--advertise-url',
    `http://127.0.0.1:${port}`,
  ]);
}

beforeAll(async () => {
  schema = await freshSchema('failover');
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-failover-ws-')));
  [nodeA, nodeB] = await Promise.all([startNode(), startNode()]);
  urlA = nodeA.url;
  for (let i = 0; i < SESSIONS; i++) {
    const { body } = await api(urlA, 'POST', '/session', { body: { sessionScope: 'thread' } });
    sessionIds.push(body.sessionId);
  }
  // One turn per session completes on A.
  await Promise.all(
    sessionIds.map(async (sessionId) => {
      const events = await openEvents(urlA, sessionId);
      const accepted = await api(urlA, 'POST', `/session/${sessionId}/prompt`, {
        body: textPrompt(`first ${sessionId}`),
      });
      await events.waitFor(
        (f) => f.event === 'turn_complete' && f.data.promptId === accepted.body.promptId,
        10_000,
      );
      events.close();
    }),
  );
  refusedWhileAlive = await api(nodeB.url, 'POST', `/session/${sessionIds[0]}/load`, { body: {} });
  // Then the load A dies under: one running and one queued prompt per session.
  for (const sessionId of sessionIds) {
    const ids: string[] = [];
    for (let n = 0; n < 2; n++) {
      const accepted = await api(urlA, 'POST', `/session/${sessionId}/prompt`, {
        body: textPrompt(`later ${n}`),
      });
      expect(accepted.status).toBe(202);
      ids.push(accepted.body.promptId);
    }
    unfinished.set(sessionId, ids);
  }
  await until(
    async () => ((await api(urlA, 'GET', '/runtime/snapshot')).body.jobs?.length ?? 0) >= SESSIONS,
    "every session's call runs",
    15_000,
  );
  await nodeA.stop('SIGKILL');
}, 60_000);

afterAll(async () => {
  await Promise.all([nodeA?.stop('SIGKILL'), nodeB?.stop()]);
  await schema?.drop();
  if (workspace !== undefined) rmSync(workspace, { recursive: true, force: true });
});

describe('two daemons sharing a PostgreSQL store, one killed with SIGKILL', () => {
  test('while its owner lives, another daemon answers 409 session_owned_elsewhere with the owner’s URL', () => {
    expect(refusedWhileAlive?.status).toBe(409);
    expect(refusedWhileAlive?.body).toMatchObject({
      code: 'session_owned_elsewhere',
      sessionId: sessionIds[0],
      owner: { url: urlA },
    });
  });

  test('after the kill, the other daemon loads each session with its history and ends what was accepted', async () => {
    for (const sessionId of sessionIds) {
      // The owner's lease runs out LEASE_MS after its last renewal; until then B says where it was.
      await expect
        .poll(
          async () => (await api(nodeB!.url, 'POST', `/session/${sessionId}/load`, { body: {} })).status,
          {
            timeout: 15_000,
            interval: 100,
          },
        )
        .toBe(200);
      const events = await openEvents(nodeB!.url, sessionId, { headers: { 'Last-Event-ID': '0' } });
      await events.waitFor((f) => f.event === 'replay_complete');
      events.close();
      expect(events.raw()).toContain(`first ${sessionId}`);
      const restarted = events.frames
        .filter((f) => f.event === 'turn_error')
        .map((f) => ({ promptId: f.data.data.promptId as string, code: f.data.data.code as string }));
      expect(restarted).toEqual(
        unfinished.get(sessionId)!.map((promptId) => ({ promptId, code: 'daemon_restarted' })),
      );
    }
    // The loaded session runs on B from where it was.
    const sessionId = sessionIds[0]!;
    const events = await openEvents(nodeB!.url, sessionId);
    const accepted = await api(nodeB!.url, 'POST', `/session/${sessionId}/prompt`, {
      body: textPrompt('on B'),
    });
    expect(accepted.status).toBe(202);
    await events.waitFor(
      (f) => f.event === 'turn_complete' && f.data.promptId === accepted.body.promptId,
      10_000,
    );
    events.close();
  });

  test('journal rows are exactly-once: one request and one result per call, A’s open calls interrupted by B', async () => {
    // B settles A once it sees A's lease expired (each renewal, every third of its lease).
    await expect
      .poll(
        async () =>
          (
            await schema.sql`SELECT count(*)::int AS n FROM sluice_journal_records r
              WHERE r.type = 'model_request' AND NOT EXISTS (SELECT 1 FROM sluice_journal_records s
                WHERE s.call_id = r.call_id AND s.type = 'model_result')`
          )[0]?.['n'],
        { timeout: 15_000, interval: 100 },
      )
      .toBe(0);
    const perCall = await schema.sql<Array<{ requests: number; results: number }>>`
      SELECT count(*) FILTER (WHERE type = 'model_request')::int AS requests,
             count(*) FILTER (WHERE type = 'model_result')::int AS results
      FROM sluice_journal_records GROUP BY call_id`;
    expect(perCall.length).toBeGreaterThanOrEqual(SESSIONS * 2 + 1);
    expect(perCall.filter((call) => call.requests !== 1 || call.results !== 1)).toEqual([]);
    const interrupted = await schema.sql<Array<{ turn_id: string; node_id: string; request_node: string }>>`
      SELECT r.turn_id, r.node_id, q.node_id AS request_node FROM sluice_journal_records r
      JOIN sluice_journal_records q ON q.call_id = r.call_id AND q.type = 'model_request'
      WHERE r.type = 'model_result' AND r.body->'error'->>'code' = 'interrupted'`;
    // The calls A had running: each prompt's first, never sent to the model again.
    expect(interrupted.map((row) => row.turn_id).sort()).toEqual(
      sessionIds.map((id) => unfinished.get(id)![0]).sort(),
    );
    const nodes = new Set(interrupted.map((row) => row.node_id));
    expect(nodes.size).toBe(1);
    expect(interrupted.every((row) => row.request_node !== row.node_id)).toBe(true);
  });
});
