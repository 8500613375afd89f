import { randomBytes } from 'node:crypto';
import { FakeClock } from '@sluice/runtime/testing';
import type { SessionRecord } from '@sluice/store';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openPostgresFleet, type PostgresFleet, type PostgresFleetOptions } from '../../src/index.js';
import { freshSchema, PG_URL, type TestSchema } from './pg-schema.js';

// docs/decisions/036: a purge vacuums the tables it deleted from before it resolves; purges that
// arrive together share runs, and a role that may not vacuum them is told so instead of a
// purge that only looks complete.

let schema: TestSchema;
const opened: PostgresFleet[] = [];

beforeAll(async () => {
  schema = await freshSchema('purge_vacuum');
});

afterAll(async () => {
  await Promise.allSettled(opened.map((fleet) => fleet.close()));
  await schema.drop();
});

async function node(options: Partial<PostgresFleetOptions> = {}): Promise<PostgresFleet> {
  const fleet = await openPostgresFleet({
    url: PG_URL,
    schema: schema.name,
    clock: new FakeClock(),
    ...options,
  });
  opened.push(fleet);
  return fleet;
}

function session(sessionId: string): SessionRecord {
  return {
    sessionId,
    workspaceCwd: '/ws',
    cwd: '/ws',
    scope: 'thread',
    createdAt: 1,
    updatedAt: 2,
    conversation: [
      { role: 'user', content: `secret of ${sessionId}` },
      { role: 'assistant', content: 'ok' },
    ],
  };
}

/** How many times PostgreSQL has vacuumed the session messages table on request (not autovacuum). */
async function vacuumRuns(): Promise<number> {
  const [row] = await schema.sql<{ n: string }[]>`SELECT vacuum_count AS n FROM pg_stat_user_tables
    WHERE schemaname = ${schema.name} AND relname = 'sluice_session_messages'`;
  return Number(row?.n ?? 0);
}

describe('a purge on PostgreSQL vacuums', () => {
  test('many purges at once all resolve, sharing fewer VACUUM runs than there are purges', async () => {
    const fleet = await node();
    const ids = Array.from({ length: 24 }, (_, i) => `purge-many-${i}`);
    for (const id of ids) await fleet.store.save(session(id));
    const before = await vacuumRuns();

    expect(await Promise.all(ids.map((id) => fleet.store.delete(id)))).toEqual(ids.map(() => true));

    const runs = (await vacuumRuns()) - before;
    expect(runs).toBeGreaterThanOrEqual(1);
    expect(runs).toBeLessThan(ids.length);
    const left = await schema.sql`SELECT 1 FROM sluice_session_messages WHERE session_id = ANY(${ids})`;
    expect(left.length).toBe(0);
  });

  test('a role that owns neither the tables nor the database gets an error naming the tables, not a silent skip', async () => {
    await node(); // migrates the schema as its owner
    const role = `sluice_purge_${randomBytes(4).toString('hex')}`;
    const admin = schema.sql;
    await admin`CREATE ROLE ${admin(role)} LOGIN`;
    try {
      await admin`GRANT USAGE, CREATE ON SCHEMA ${admin(schema.name)} TO ${admin(role)}`;
      await admin`GRANT ALL ON ALL TABLES IN SCHEMA ${admin(schema.name)} TO ${admin(role)}`;
      await admin`GRANT ALL ON ALL SEQUENCES IN SCHEMA ${admin(schema.name)} TO ${admin(role)}`;
      const url = new URL(PG_URL);
      url.username = role;
      url.searchParams.set('search_path', schema.name);
      const fleet = await node({ url: url.toString(), schema: undefined });
      await fleet.store.save(session('purge-not-owner'));

      await expect(fleet.store.delete('purge-not-owner')).rejects.toThrow(
        /may not VACUUM sluice_journal_records, sluice_session_messages, sluice_sessions/,
      );
      await fleet.close();
    } finally {
      const cleanup = postgres(PG_URL, { max: 1, onnotice: () => {} });
      await cleanup`DROP OWNED BY ${cleanup(role)}`;
      await cleanup`DROP ROLE ${cleanup(role)}`;
      await cleanup.end();
    }
  });
});
