import {
  EchoProvider,
  JournalClosedError,
  JournalWriteError,
  ModelRuntime,
  OverloadedError,
  type JournalRecord,
  type ModelRequestRecord,
  type ModelResultRecord,
} from '@sluice/runtime';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openPostgresFleet, type PostgresFleet } from '../../src/index.js';
import { freshSchema, PG_URL, type TestSchema } from './pg-schema.js';

let schema: TestSchema;
let fleet: PostgresFleet;

beforeAll(async () => {
  schema = await freshSchema('journal');
  fleet = await openPostgresFleet({ url: PG_URL, schema: schema.name });
});

afterAll(async () => {
  await fleet.close();
  await schema.drop();
});

let calls = 0;
function request(callId = `call-${++calls}`, sessionId?: string): ModelRequestRecord {
  const record: ModelRequestRecord = {
    version: 1,
    type: 'model_request',
    callId,
    taskId: `tmp-${callId}`,
    at: new Date().toISOString(),
    request: { messages: [{ role: 'user', content: 'ping' }] },
    options: { timeoutMs: 1000, provider: 'echo', model: 'echo-1', kind: 'complete' },
  };
  if (sessionId !== undefined) record.sessionId = sessionId;
  return record;
}

function result(of: ModelRequestRecord): ModelResultRecord {
  const record: ModelResultRecord = {
    version: 1,
    type: 'model_result',
    callId: of.callId,
    taskId: of.taskId,
    at: new Date().toISOString(),
    outcome: 'success',
    text: 'pong',
    durationMs: 1,
  };
  if (of.sessionId !== undefined) record.sessionId = of.sessionId;
  return record;
}

async function rowsOf(callId: string): Promise<Array<{ type: string; node_id: string }>> {
  return schema.sql<Array<{ type: string; node_id: string }>>`
    SELECT type, node_id FROM sluice_journal_records WHERE call_id = ${callId} ORDER BY seq`;
}

describe('PostgresJournal', () => {
  test('SCH-9 an append is confirmed only once committed: another connection reads it then', async () => {
    const record = request();
    let confirmed = false;
    const appended = fleet.journal.append(record).then(() => (confirmed = true));
    expect(confirmed).toBe(false);
    await appended;
    expect(await rowsOf(record.callId)).toEqual([{ type: 'model_request', node_id: fleet.nodeId }]);
  });

  test('appends made together are group-committed: one statement serves many records', async () => {
    const before = fleet.journal.stats();
    const records = Array.from({ length: 500 }, () => request());
    await Promise.all(records.map((record) => fleet.journal.append(record)));
    const after = fleet.journal.stats();
    expect(after.recordsCommitted - before.recordsCommitted).toBe(500);
    expect(after.batchesCommitted - before.batchesCommitted).toBeLessThanOrEqual(3);
    expect(after.recordsOutstanding).toBe(0);
  });

  test('a second result for a call is refused alone; the records batched with it commit', async () => {
    const first = request();
    await fleet.journal.append(first);
    await fleet.journal.append(result(first));
    const other = request();
    const outcomes = await Promise.allSettled([
      fleet.journal.append(result(first)),
      fleet.journal.append(other),
    ]);
    expect(outcomes[0].status).toBe('rejected');
    expect((outcomes[0] as PromiseRejectedResult).reason).toBeInstanceOf(JournalWriteError);
    expect(String((outcomes[0] as PromiseRejectedResult).reason)).toContain(
      `call ${first.callId} already has a model_result record`,
    );
    expect(outcomes[1].status).toBe('fulfilled');
    expect((await rowsOf(first.callId)).map((row) => row.type)).toEqual(['model_request', 'model_result']);
  });

  test('a malformed record fails alone, naming its field', async () => {
    const bad = { ...request(), callId: 42 } as unknown as JournalRecord;
    const good = request();
    const outcomes = await Promise.allSettled([fleet.journal.append(bad), fleet.journal.append(good)]);
    expect((outcomes[0] as PromiseRejectedResult).reason.message).toBe(
      'journal record callId must be a string, got 42',
    );
    expect(outcomes[1].status).toBe('fulfilled');
  });

  test('SCH-9/SCH-16 the runtime records exactly one request and one result per call', async () => {
    const runtime = new ModelRuntime({
      provider: new EchoProvider(),
      journal: fleet.journal,
      scheduler: { maxConcurrency: 8, maxQueued: 64, maxInflight: 64 },
      pricing: { inputMinorPerMillionTokens: 1_000_000, outputMinorPerMillionTokens: 2_000_000 },
    });
    const sessionId = 'session-runtime';
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        runtime.complete(
          { messages: [{ role: 'user', content: `hi ${i}` }] },
          { sessionId, turnId: `p${i % 4}` },
        ),
      ),
    );
    await runtime.shutdown();
    const rows = await schema.sql<Array<{ call_id: string; requests: number; results: number }>>`
      SELECT call_id, count(*) FILTER (WHERE type = 'model_request')::int AS requests,
             count(*) FILTER (WHERE type = 'model_result')::int AS results
      FROM sluice_journal_records WHERE session_id = ${sessionId} GROUP BY call_id`;
    expect(rows).toHaveLength(40);
    expect(rows.every((row) => row.requests === 1 && row.results === 1)).toBe(true);
  });

  test('the read side lists a prompt’s calls with their results, usage and cost', async () => {
    const calls = await fleet.journal.reader.callsForSession('session-runtime', 'p1');
    expect(calls).toHaveLength(10);
    for (const call of calls) {
      expect(call.promptId).toBe('p1');
      expect(call.result?.outcome).toBe('success');
      expect(call.result?.usage?.outputTokens).toBeGreaterThan(0);
      expect(call.result?.costMinor).toBeGreaterThan(0);
    }
    const records = await fleet.journal.recordsForSession('session-runtime');
    expect(records).toHaveLength(80);
    const first = calls[0]!;
    expect((await fleet.journal.reader.recordsForCall(first.callId)).map((r) => r.type)).toEqual([
      'model_request',
      'model_result',
    ]);
    expect(await fleet.journal.reader.recordsForTask(first.taskId)).toHaveLength(2);
  });

  test('SCH bounded: a stalled database holds calls in the runtime’s in-flight bound, and the next is refused', async () => {
    const runtime = new ModelRuntime({
      provider: new EchoProvider(),
      journal: fleet.journal,
      scheduler: { maxConcurrency: 2, maxQueued: 2, maxInflight: 4 },
    });
    // Another client holds the journal's table: every insert waits, as on a database that stalls.
    const locker = await schema.sql.reserve();
    let locked = false;
    try {
      await locker`BEGIN`;
      await locker`LOCK TABLE sluice_journal_records IN ACCESS EXCLUSIVE MODE`;
      locked = true;
      const held = Array.from({ length: 4 }, (_, i) =>
        runtime.complete({ messages: [{ role: 'user', content: `held ${i}` }] }),
      );
      for (const call of held) call.catch(() => {}); // awaited below; a failed test must not leave them unhandled
      // Admission is synchronous (docs/architecture.md): the refusal is thrown before anything waits.
      let refused: unknown;
      try {
        void runtime.complete({ messages: [{ role: 'user', content: 'one more' }] });
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(OverloadedError);
      expect((refused as OverloadedError).capacity).toBe('InflightFull');
      expect(fleet.journal.stats().recordsOutstanding).toBe(4);
      await locker`ROLLBACK`;
      locked = false;
      expect((await Promise.all(held)).map((response) => response.text)).toHaveLength(4);
    } finally {
      if (locked) await locker`ROLLBACK`;
      locker.release();
      await runtime.shutdown();
    }
  });

  test('appends after close fail with JournalClosedError; what was accepted before is committed', async () => {
    const own = await freshSchema('journal_close');
    const closing = await openPostgresFleet({ url: PG_URL, schema: own.name });
    try {
      const accepted = request();
      const appended = closing.journal.append(accepted);
      const closed = closing.close();
      await expect(closing.journal.append(request())).rejects.toBeInstanceOf(JournalClosedError);
      await appended;
      await closed;
      const rows = await own.sql`SELECT call_id FROM sluice_journal_records`;
      expect(rows.map((row) => row['call_id'])).toEqual([accepted.callId]);
    } finally {
      await closing.close();
      await own.drop();
    }
  });
});
