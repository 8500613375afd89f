import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { api } from '../../../daemon/test/helpers/http-client.js';
import { sessionWithTurns } from '../../../daemon/test/helpers/session-turns.js';
import { startSluice } from '../../../daemon/test/helpers/sluice-process.js';
import { filesHolding, rowVersionsHolding, scratchDatabase, type ScratchDatabase } from './store-pages.js';

// Issue 28 item 1 on PostgreSQL (docs/decisions/036): after `DELETE /session/:id?purge=true` on a
// fleet daemon, the session's text is in no row version of the store (plain VACUUM), and with
// --store-purge-vacuum full in no file of its tables, TOAST tables or indexes either.

let db: ScratchDatabase;

beforeAll(async () => {
  db = await scratchDatabase('purge');
});

afterAll(async () => {
  await db.drop();
});

/**
 * A fleet daemon on a schema of its own, a session with `purged`'s text in a short turn and in
 * a long one (stored out of line, in the TOAST table), and a session with `kept`'s text; runs
 * `check` with the purged session's id and stops the daemon.
 */
async function withTwoSessions(
  args: string[],
  check: (url: string, schema: string, sessionId: string) => Promise<void>,
): Promise<void> {
  const schema = `purge_${randomBytes(4).toString('hex')}`;
  await db.sql`CREATE SCHEMA ${db.sql(schema)}`;
  const sluice = await startSluice(['--store', `${db.url}?search_path=${schema}`, ...args]);
  try {
    // Random hex does not compress: the long turn goes to the TOAST table as it is.
    const long = (marker: string): string => `${marker} ${randomBytes(3_000).toString('hex')} ${marker}`;
    const sessionId = await sessionWithTurns(sluice.url, [`${purged} short turn`, long(purged)]);
    await sessionWithTurns(sluice.url, [`${kept} short turn`, long(kept)]);
    await check(sluice.url, schema, sessionId);
  } finally {
    await sluice.stop('SIGKILL');
  }
}

const purged = `purged-${randomBytes(6).toString('hex')}`;
const kept = `kept-${randomBytes(6).toString('hex')}`;

test('a purge answers once no row version of the store, live or deleted, holds the session text (plain VACUUM, the default)', async () => {
  await withTwoSessions([], async (url, schema, sessionId) => {
    expect(await rowVersionsHolding(db.sql, schema, purged)).toBeGreaterThan(0);

    expect((await api(url, 'DELETE', `/session/${sessionId}?purge=true`)).status).toBe(204);

    // Not only hidden from SQL: no dead copy is left for a page reader, a dump or a replica.
    expect(await rowVersionsHolding(db.sql, schema, purged)).toBe(0);
    expect(await rowVersionsHolding(db.sql, schema, kept)).toBeGreaterThan(0);
    expect((await api(url, 'GET', `/session/${sessionId}/status`)).status).toBe(404);
  });
});

test('with --store-purge-vacuum full, no file of the store’s tables, TOAST tables or indexes holds the session text', async () => {
  await withTwoSessions(['--store-purge-vacuum', 'full'], async (url, schema, sessionId) => {
    expect(await filesHolding(db.sql, schema, purged)).not.toEqual([]);

    expect((await api(url, 'DELETE', `/session/${sessionId}?purge=true`)).status).toBe(204);

    expect(await filesHolding(db.sql, schema, purged)).toEqual([]);
    expect(await rowVersionsHolding(db.sql, schema, purged)).toBe(0);
    expect(await filesHolding(db.sql, schema, kept)).not.toEqual([]);
  });
});
