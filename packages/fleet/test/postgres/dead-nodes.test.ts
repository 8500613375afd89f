import { INTERRUPTED_MESSAGE, type ModelRequestRecord, type ModelResultRecord } from '@sluice/runtime';
import { FakeClock } from '@sluice/runtime/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { StoreLeaseLostError, openPostgresFleet, type PostgresFleet } from '../../src/index.js';
import { freshSchema, PG_URL, type TestSchema } from './pg-schema.js';

// Issue 21 part 2: several nodes share one journal. Only calls left open by a *dead* node (its
// lease expired) are settled, each with one `interrupted` result (SCH-15: never re-run), once,
// whichever nodes look; a node that was only paused finds its lease lost and writes nothing more.

const LEASE_MS = 10_000;
let schema: TestSchema;
/** Wall-clock time as every node of this file sees it; moved by the tests, never by waiting. */
let wallNow = Date.UTC(2026, 11, 3);
const opened: PostgresFleet[] = [];
const lost: Error[] = [];

beforeAll(async () => {
  schema = await freshSchema('dead_nodes');
});

afterAll(async () => {
  await Promise.allSettled(opened.map((fleet) => fleet.close()));
  await schema.drop();
});

async function node(): Promise<PostgresFleet> {
  const fleet = await openPostgresFleet({
    url: PG_URL,
    schema: schema.name,
    leaseMs: LEASE_MS,
    wallNow: () => wallNow,
    clock: new FakeClock(),
    onLeaseLost: (error) => lost.push(error),
  });
  opened.push(fleet);
  return fleet;
}

let calls = 0;
function request(): ModelRequestRecord {
  const callId = `dead-${++calls}`;
  return {
    version: 1,
    type: 'model_request',
    callId,
    taskId: `task-${callId}`,
    sessionId: 'session-dead',
    turnId: 'prompt-1',
    at: new Date(wallNow).toISOString(),
    request: { messages: [{ role: 'user', content: 'ping' }] },
    options: { timeoutMs: 1000, provider: 'echo', model: 'echo-1', kind: 'complete' },
  };
}

function result(of: ModelRequestRecord): ModelResultRecord {
  return {
    ...of,
    type: 'model_result',
    outcome: 'success',
    durationMs: 1,
    text: 'pong',
  } as ModelResultRecord;
}

async function resultsOf(
  callIds: readonly string[],
): Promise<Array<{ call_id: string; body: ModelResultRecord }>> {
  return schema.sql<Array<{ call_id: string; body: ModelResultRecord }>>`
    SELECT call_id, body FROM sluice_journal_records
    WHERE type = 'model_result' AND call_id = ANY(${callIds}::text[]) ORDER BY seq`;
}

describe('settling dead nodes', () => {
  test('SCH-15 calls a dead node left open get one interrupted result each; its finished calls keep theirs', async () => {
    const a = await node();
    const b = await node();
    const open = [request(), request(), request()];
    const done = request();
    for (const record of [...open, done]) await a.journal.append(record);
    await a.journal.append(result(done));

    // A stops renewing (killed); B sees its lease expire.
    wallNow += LEASE_MS + 1;
    expect(await b.lease.tick()).toBe(true);
    const settled = await b.settleDeadNodes();
    expect(settled.interruptedCalls).toBe(0); // the tick settled it already

    const results = await resultsOf([...open, done].map((r) => r.callId));
    expect(results.map((r) => r.call_id).sort()).toEqual([...open, done].map((r) => r.callId).sort());
    for (const { body } of results.filter((r) => r.call_id !== done.callId)) {
      expect(body.error).toEqual({ code: 'interrupted', message: INTERRUPTED_MESSAGE });
      expect(body.sessionId).toBe('session-dead');
      expect(body.turnId).toBe('prompt-1');
    }
    const writers = await schema.sql`SELECT DISTINCT node_id FROM sluice_journal_records
      WHERE type = 'model_result' AND call_id = ANY(${open.map((r) => r.callId)}::text[])`;
    expect(writers.map((row) => row['node_id'])).toEqual([b.nodeId]);

    // A was only paused: its next write finds its lease gone and lands nowhere.
    const late = a.journal.append(result(open[0]!));
    await expect(late).rejects.toBeInstanceOf(StoreLeaseLostError);
    expect(lost.some((error) => error.message.includes(a.nodeId))).toBe(true);
    expect(await resultsOf([open[0]!.callId])).toHaveLength(1);
    await b.close();
  });

  test('the calls of a live node are never settled, however long they run', async () => {
    const a = await node();
    const b = await node();
    const running = request();
    await a.journal.append(running);
    wallNow += LEASE_MS - 1;
    expect((await b.settleDeadNodes()).interruptedCalls).toBe(0);
    expect(await a.lease.tick()).toBe(true); // renewed: alive for another lease
    wallNow += LEASE_MS - 1;
    expect((await b.settleDeadNodes()).interruptedCalls).toBe(0);
    await a.journal.append(result(running));
    expect((await resultsOf([running.callId]))[0]?.body.outcome).toBe('success');
    await Promise.all([a.close(), b.close()]);
  });

  test('nodes settling the same dead node at once write one result per call', async () => {
    const dead = await node();
    const open = Array.from({ length: 20 }, () => request());
    await Promise.all(open.map((record) => dead.journal.append(record)));
    wallNow += LEASE_MS + 1;
    const settlers = [await node(), await node(), await node()];
    const outcomes = await Promise.all(settlers.map((fleet) => fleet.settleDeadNodes()));
    expect(outcomes.reduce((sum, outcome) => sum + outcome.interruptedCalls, 0)).toBe(20);
    expect(outcomes.filter((outcome) => outcome.nodes.includes(dead.nodeId))).toHaveLength(1);
    expect(await resultsOf(open.map((r) => r.callId))).toHaveLength(20);
    await Promise.all(settlers.map((fleet) => fleet.close()));
  });

  test('a node that stops with every call settled removes its row: nothing is left to settle', async () => {
    const a = await node();
    const call = request();
    await a.journal.append(call);
    await a.journal.append(result(call));
    await a.close();
    const rows = await schema.sql`SELECT 1 FROM sluice_nodes WHERE node_id = ${a.nodeId}`;
    expect(rows).toHaveLength(0);
  });
});
