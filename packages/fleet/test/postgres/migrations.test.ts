import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  STORE_SCHEMA_VERSION,
  StoreSchemaTooNewError,
  StoreUnreachableError,
  openPostgresFleet,
} from '../../src/index.js';
import { freshSchema, PG_URL, type TestSchema } from './pg-schema.js';

// Each test gets a schema of its own: none depends on what another left behind.
let schema: TestSchema;

beforeEach(async () => {
  schema = await freshSchema('migrations');
});

afterEach(async () => {
  await schema.drop();
});

describe('store migrations', () => {
  test('a fresh database is migrated to the current version at open', async () => {
    const fleet = await openPostgresFleet({ url: PG_URL, schema: schema.name });
    await fleet.close();
    expect(fleet.migration).toEqual({ from: 0, to: STORE_SCHEMA_VERSION });
    const [row] =
      await schema.sql`SELECT version FROM sluice_schema_migrations WHERE component = 'fleet.postgres'`;
    expect(row?.['version']).toBe(STORE_SCHEMA_VERSION);
  });

  test('opening again migrates nothing and keeps what was stored', async () => {
    const first = await openPostgresFleet({ url: PG_URL, schema: schema.name });
    await first.store.save({
      sessionId: 'kept',
      workspaceCwd: '/w',
      cwd: '/w',
      scope: 'thread',
      createdAt: 1,
      updatedAt: 1,
      conversation: [{ role: 'user', content: 'still here' }],
    });
    await first.close();
    const second = await openPostgresFleet({ url: PG_URL, schema: schema.name });
    try {
      expect(second.migration).toEqual({ from: STORE_SCHEMA_VERSION, to: STORE_SCHEMA_VERSION });
      expect((await second.store.load('kept'))?.conversation).toEqual([
        { role: 'user', content: 'still here' },
      ]);
    } finally {
      await second.close();
    }
  });

  test('nodes opening a fresh database at once migrate it once', async () => {
    const other = await freshSchema('migrations_race');
    try {
      const fleets = await Promise.all(
        [1, 2, 3].map(() => openPostgresFleet({ url: PG_URL, schema: other.name })),
      );
      await Promise.all(fleets.map((fleet) => fleet.close()));
      expect(fleets.filter((fleet) => fleet.migration.from === 0)).toHaveLength(1);
    } finally {
      await other.drop();
    }
  });

  test('a database migrated by a newer build is refused, naming both versions, and left unchanged', async () => {
    const newer = STORE_SCHEMA_VERSION + 1;
    await (await openPostgresFleet({ url: PG_URL, schema: schema.name })).close();
    await schema.sql`UPDATE sluice_schema_migrations SET version = ${newer} WHERE component = 'fleet.postgres'`;
    try {
      const opening = openPostgresFleet({ url: PG_URL, schema: schema.name });
      await expect(opening).rejects.toBeInstanceOf(StoreSchemaTooNewError);
      await expect(opening).rejects.toThrow(
        `has schema version ${newer}, newer than the ${STORE_SCHEMA_VERSION} this build knows`,
      );
      const [row] =
        await schema.sql`SELECT version FROM sluice_schema_migrations WHERE component = 'fleet.postgres'`;
      expect(row?.['version']).toBe(newer);
      const nodes = await schema.sql`SELECT node_id FROM sluice_nodes`;
      expect(nodes).toHaveLength(0);
    } finally {
      await schema.sql`UPDATE sluice_schema_migrations SET version = ${STORE_SCHEMA_VERSION} WHERE component = 'fleet.postgres'`;
    }
  });
});

describe('store options', () => {
  test('an unreachable database is refused at open, its URL named without the password', async () => {
    const opening = openPostgresFleet({
      url: 'postgres://sluice:secret@127.0.0.1:1/test',
      connectTimeoutMs: 2000,
    });
    await expect(opening).rejects.toBeInstanceOf(StoreUnreachableError);
    await expect(opening).rejects.toThrow('postgres://sluice:***@127.0.0.1:1/test');
    await expect(opening).rejects.not.toThrow('secret');
  });

  test.each([
    ['http://127.0.0.1/test', 'must be a postgres:// or postgresql:// URL'],
    ['postgres://127.0.0.1', 'must name a database'],
    ['not a url', 'must be a postgres://user@host:port/database URL'],
  ])('a store URL %j is refused before connecting: %s', async (url, message) => {
    await expect(openPostgresFleet({ url })).rejects.toThrow(message);
  });

  test('a bad lease or advertise URL is named', async () => {
    await expect(openPostgresFleet({ url: PG_URL, leaseMs: 10 })).rejects.toThrow(
      'leaseMs must be an integer of at least 100, got 10',
    );
    await expect(openPostgresFleet({ url: PG_URL, advertiseUrl: 'ftp://x' })).rejects.toThrow(
      'advertiseUrl must be an http(s) URL, got "ftp://x"',
    );
  });
});
