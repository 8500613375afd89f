import { randomBytes } from 'node:crypto';
import postgres, { type Sql } from 'postgres';

/** The test database (127.0.0.1:5432, trust auth, database `test`). */
export const PG_URL = process.env['SLUICE_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * A schema of its own for one test file, so that files running in parallel never share tables,
 * and a client on it for checks; `drop()` removes the schema and everything in it.
 */
export interface TestSchema {
  readonly name: string;
  /** A client whose search_path is the schema: reads what the code under test committed. */
  readonly sql: Sql;
  drop(): Promise<void>;
}

/** Makes a fresh schema named after `prefix`. */
export async function freshSchema(prefix: string): Promise<TestSchema> {
  const name = `sluice_${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
  await admin`CREATE SCHEMA ${admin(name)}`;
  await admin.end();
  const sql = postgres(PG_URL, { max: 2, onnotice: () => {}, connection: { search_path: name } });
  return {
    name,
    sql,
    drop: async () => {
      await sql`DROP SCHEMA ${sql(name)} CASCADE`;
      await sql.end();
    },
  };
}
