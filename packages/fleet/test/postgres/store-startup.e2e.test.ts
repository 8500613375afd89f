import { afterAll, beforeAll, expect, test } from 'vitest';
import { logLines } from '../../../daemon/test/helpers/log-lines.js';
import { runSluice } from '../../../daemon/test/helpers/sluice-process.js';
import { STORE_SCHEMA_VERSION } from '../../src/index.js';
import { freshSchema, PG_URL, type TestSchema } from './pg-schema.js';

// A store the daemon cannot use is refused at start-up, exit 1, with a message naming --store
// (its password hidden) — never a daemon that answers 500 to every call.

let schema: TestSchema;

beforeAll(async () => {
  schema = await freshSchema('startup');
});

afterAll(async () => {
  await schema.drop();
});

test('a --store that is not a postgres URL, or --advertise-url without one: exit 1 naming the flag', async () => {
  const notPostgres = await runSluice([
    'serve',
    '--port',
    '0',
    '--store',
    'mysql://sluice:hunter2@db/sluice',
  ]);
  expect(notPostgres.code).toBe(1);
  expect(notPostgres.stderr).toContain(
    '--store: store must be a postgres://user@host:port/database URL, got mysql://sluice:***@db/sluice',
  );
  expect(notPostgres.stderr).not.toContain('hunter2');
  const alone = await runSluice(['serve', '--port', '0', '--advertise-url', 'http://127.0.0.1:4170']);
  expect(alone.code).toBe(1);
  expect(alone.stderr).toContain('--advertise-url: advertiseUrl needs store');
});

test('an unreachable --store: exit 1 naming it, without its password', async () => {
  const { code, stderr } = await runSluice([
    'serve',
    '--port',
    '0',
    '--store',
    'postgres://sluice:hunter2@127.0.0.1:1/test',
  ]);
  expect(code).toBe(1);
  // Every stderr line is JSON; the refusal is a message of one of them.
  expect(logLines(stderr).map((line) => line['msg'])).toContainEqual(
    expect.stringContaining('--store: Store "postgres://sluice:***@127.0.0.1:1/test" is unreachable'),
  );
  expect(stderr).not.toContain('hunter2');
});

test('a --store migrated by a newer build: exit 1 naming both schema versions', async () => {
  await schema.sql
    .unsafe(`CREATE TABLE sluice_schema_migrations (component text PRIMARY KEY, version integer NOT NULL);
    INSERT INTO sluice_schema_migrations VALUES ('fleet.postgres', ${STORE_SCHEMA_VERSION + 1})`);
  const { code, stderr } = await runSluice([
    'serve',
    '--port',
    '0',
    '--store',
    `${PG_URL}?search_path=${schema.name}`,
  ]);
  expect(code).toBe(1);
  expect(stderr).toContain(
    `has schema version ${STORE_SCHEMA_VERSION + 1}, newer than the ${STORE_SCHEMA_VERSION} this build knows`,
  );
});
