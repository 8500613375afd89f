import { FakeClock } from '@sluice/runtime/testing';
import type { SessionRecord } from '@sluice/store';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  SessionOwnedByOtherNodeError,
  StoreClosedError,
  openPostgresFleet,
  type PostgresFleet,
  type PostgresFleetOptions,
} from '../../src/index.js';
import { freshSchema, PG_URL, type TestSchema } from './pg-schema.js';

const LEASE_MS = 10_000;
let schema: TestSchema;
let wallNow = Date.UTC(2026, 11, 3);
const opened: PostgresFleet[] = [];

beforeAll(async () => {
  schema = await freshSchema('sessions');
});

afterAll(async () => {
  await Promise.allSettled(opened.map((fleet) => fleet.close()));
  await schema.drop();
});

async function node(options: Partial<PostgresFleetOptions> = {}): Promise<PostgresFleet> {
  const fleet = await openPostgresFleet({
    url: PG_URL,
    schema: schema.name,
    leaseMs: LEASE_MS,
    wallNow: () => wallNow,
    clock: new FakeClock(),
    ...options,
  });
  opened.push(fleet);
  return fleet;
}

let sessions = 0;
function session(conversation: SessionRecord['conversation'] = [], workspaceCwd = '/ws'): SessionRecord {
  const n = ++sessions;
  return {
    sessionId: `session-${n}`,
    workspaceCwd,
    cwd: `${workspaceCwd}/sub`,
    scope: 'thread',
    createdAt: 1_000 + n,
    updatedAt: 2_000 + n,
    displayName: `name ${n}`,
    conversation,
  };
}

const turn = (i: number): SessionRecord['conversation'] => [
  { role: 'user', content: `question ${i}` },
  { role: 'assistant', content: `answer ${i}`, name: 'echo' },
];

async function storedSeqs(sessionId: string): Promise<number[]> {
  const rows =
    await schema.sql`SELECT seq FROM sluice_session_messages WHERE session_id = ${sessionId} ORDER BY seq`;
  return rows.map((row) => Number(row['seq']));
}

describe('PostgresSessionStore', () => {
  test('a session saved on one node loads on another with its history', async () => {
    const a = await node();
    const b = await node();
    const record = session([...turn(1), { role: 'tool', content: 'out', toolCallId: 'call-1' }]);
    await a.store.save(record);
    expect(await b.store.load(record.sessionId)).toEqual(record);
    expect(await b.store.load('no-such-session')).toBeUndefined();
  });

  test("a session's model is kept across nodes and in the listing; a later save may clear it", async () => {
    const a = await node();
    const b = await node();
    const record = { ...session(turn(1), '/models'), model: 'coder' };
    await a.store.save(record);
    expect(await b.store.load(record.sessionId)).toEqual(record);
    expect((await b.store.list('/models')).sessions[0]).toMatchObject({ model: 'coder' });
    const { model: _model, ...withoutModel } = record;
    await a.store.save(withoutModel);
    const loaded = await b.store.load(record.sessionId);
    expect(loaded && 'model' in loaded).toBe(false);
  });

  test('a save writes only what changed: appended messages inserted, trimmed ones deleted', async () => {
    const a = await node({ maxConversationMessages: 4 });
    const record = session(turn(1));
    await a.store.save(record);
    await a.store.save({ ...record, conversation: [...turn(1), ...turn(2)] });
    expect(await storedSeqs(record.sessionId)).toEqual([0, 1, 2, 3]);
    await a.store.save({ ...record, conversation: [...turn(1), ...turn(2), ...turn(3)] });
    expect(await storedSeqs(record.sessionId)).toEqual([2, 3, 4, 5]);
    expect((await a.store.load(record.sessionId))?.conversation).toEqual([...turn(2), ...turn(3)]);
  });

  test('a node saving a session another node loaded continues its history from the store', async () => {
    const a = await node();
    const b = await node();
    const record = session(turn(1));
    await a.store.save(record);
    await a.store.release(record.sessionId);
    const loaded = (await b.store.load(record.sessionId))!;
    await b.store.save({ ...loaded, conversation: [...loaded.conversation, ...turn(2)] });
    expect(await storedSeqs(record.sessionId)).toEqual([0, 1, 2, 3]);
  });

  test('a session live on one node is claimed by no other while that node lives, and names it', async () => {
    const a = await node({ advertiseUrl: 'http://node-a.example:4170' });
    const b = await node();
    const record = session(turn(1));
    await a.store.save(record);
    expect(await a.store.claim(record.sessionId)).toBeUndefined();
    expect(await b.store.claim(record.sessionId)).toEqual({
      nodeId: a.nodeId,
      url: 'http://node-a.example:4170',
    });
  });

  test('a save of a session another live node owns is refused and changes nothing', async () => {
    const a = await node();
    const b = await node();
    const record = session(turn(1));
    await a.store.save(record);
    const stale = b.store.save({ ...record, conversation: [...turn(1), ...turn(9)] });
    await expect(stale).rejects.toBeInstanceOf(SessionOwnedByOtherNodeError);
    expect((await b.store.load(record.sessionId))?.conversation).toEqual(turn(1));
  });

  test('a session is free to claim once its owner released it, or once its owner’s lease expired', async () => {
    const a = await node();
    const b = await node();
    const released = session(turn(1));
    const orphaned = session(turn(1));
    await a.store.save(released);
    await a.store.save(orphaned);
    await a.store.release(released.sessionId);
    expect(await b.store.claim(released.sessionId)).toBeUndefined();
    expect(await b.store.claim(orphaned.sessionId)).toEqual({ nodeId: a.nodeId });
    wallNow += LEASE_MS + 1; // a stops renewing; b renews
    await b.lease.tick();
    expect(await b.store.claim(orphaned.sessionId)).toBeUndefined();
    await expect(a.store.save(orphaned)).rejects.toThrow(`the lease of node ${a.nodeId} expired`);
  });

  test('a workspace’s sessions list newest first, a page at a time', async () => {
    const a = await node();
    const records = [session([], '/listed'), session(turn(1), '/listed'), session([], '/listed')];
    for (const record of records) await a.store.save(record);
    await a.store.save(session([], '/other'));
    const first = await a.store.list('/listed', { size: 2 });
    expect(first.sessions.map((s) => s.sessionId)).toEqual([records[2]!.sessionId, records[1]!.sessionId]);
    expect(first.sessions[1]).toMatchObject({ messageCount: 2, displayName: records[1]!.displayName });
    const second = await a.store.list('/listed', { size: 2, cursor: first.nextCursor! });
    expect(second.sessions.map((s) => s.sessionId)).toEqual([records[0]!.sessionId]);
    expect(second.nextCursor).toBeUndefined();
  });

  test('prompts accepted and never ended are handed once to whichever node loads the session', async () => {
    const a = await node();
    const b = await node();
    await a.store.recordAdmissions(
      [
        { sessionId: 'ledger', promptId: 'p2', acceptedAt: 20 },
        { sessionId: 'ledger', promptId: 'p1', acceptedAt: 10 },
        { sessionId: 'ledger', promptId: 'p3', acceptedAt: 30 },
      ],
      [],
    );
    await a.store.recordAdmissions([], [{ sessionId: 'ledger', promptId: 'p3' }]);
    expect(await b.store.takeUnsettled('ledger')).toEqual([
      { sessionId: 'ledger', promptId: 'p1', acceptedAt: 10 },
      { sessionId: 'ledger', promptId: 'p2', acceptedAt: 20 },
    ]);
    expect(await a.store.takeUnsettled('ledger')).toEqual([]);
  });

  test('saving a session beyond maxSessions evicts the least recently saved one no daemon has open', async () => {
    const own = await freshSchema('sessions_cap');
    const capped = await openPostgresFleet({ url: PG_URL, schema: own.name, maxSessions: 2 });
    try {
      const [open, closed, newest] = [session(), session(), session()];
      await capped.store.save(open!); // the oldest, but still open here
      await capped.store.save(closed!);
      await capped.store.release(closed!.sessionId);
      await capped.store.save(newest!);
      expect(await capped.store.load(closed!.sessionId)).toBeUndefined();
      expect(await capped.store.load(open!.sessionId)).toBeDefined();
      expect(await capped.store.load(newest!.sessionId)).toBeDefined();
    } finally {
      await capped.close();
      await own.drop();
    }
  });

  test('a malformed record is refused naming its field; a closed store refuses every call', async () => {
    const a = await node();
    await expect(a.store.save({ ...session(), scope: 'nope' } as unknown as SessionRecord)).rejects.toThrow(
      `session record scope must be 'single' or 'thread', got "nope"`,
    );
    await a.close();
    await expect(a.store.load('x')).rejects.toBeInstanceOf(StoreClosedError);
  });
});
