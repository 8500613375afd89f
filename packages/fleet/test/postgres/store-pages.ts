import { randomBytes } from 'node:crypto';
import postgres, { type Sql } from 'postgres';
import { PG_URL } from './pg-schema.js';

/**
 * A database of its own, so that no transaction of another test (or another user of the
 * server) holds a snapshot that keeps VACUUM from removing what a purge deleted; `pageinspect`
 * is installed in it. `drop()` ends its connections and drops it.
 */
export interface ScratchDatabase {
  readonly url: string;
  /** A superuser client on it (reads pages and files). */
  readonly sql: Sql;
  drop(): Promise<void>;
}

/** Creates a fresh database from `template0` (which nobody can be connected to). */
export async function scratchDatabase(prefix: string): Promise<ScratchDatabase> {
  const name = `sluice_${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
  await admin`CREATE DATABASE ${admin(name)} TEMPLATE template0`;
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
  await sql`CREATE EXTENSION pageinspect`;
  return {
    url: url.toString(),
    sql,
    drop: async () => {
      await sql.end();
      await admin`DROP DATABASE ${admin(name)} WITH (FORCE)`;
      await admin.end();
    },
  };
}

/** The heap relations of `schema`: every table and its TOAST table. */
async function heaps(sql: Sql, schema: string): Promise<string[]> {
  const rows = await sql<{ rel: string }[]>`
    WITH t AS (SELECT c.oid, c.reltoastrelid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = ${schema} AND c.relkind = 'r')
    SELECT oid::regclass::text AS rel FROM t
     UNION SELECT reltoastrelid::regclass::text FROM t WHERE reltoastrelid <> 0`;
  return rows.map((row) => row.rel);
}

/**
 * How many row versions — live, or deleted and not yet vacuumed — of the tables of `schema`
 * (and their TOAST tables) hold `marker`, read page by page with `pageinspect`.
 */
export async function rowVersionsHolding(sql: Sql, schema: string, marker: string): Promise<number> {
  let count = 0;
  for (const rel of await heaps(sql, schema)) {
    const [row] = await sql<{ n: number }[]>`
      SELECT count(*)::int AS n
        FROM generate_series(0, (pg_relation_size(${rel}::regclass) / current_setting('block_size')::int)::int - 1) AS blk,
             LATERAL heap_page_items(get_raw_page(${rel}, blk)) AS item
       WHERE position(convert_to(${marker}, 'UTF8') IN item.t_data) > 0`;
    count += row?.n ?? 0;
  }
  return count;
}

/**
 * The files on disk (after a `CHECKPOINT`) of the tables of `schema`, their TOAST tables and
 * every index of both that hold `marker` anywhere in their bytes, free space included.
 */
export async function filesHolding(sql: Sql, schema: string, marker: string): Promise<string[]> {
  await sql`CHECKPOINT`;
  const relations = await heaps(sql, schema);
  const rows = await sql<{ rel: string }[]>`
    WITH r AS (SELECT to_regclass(n) AS oid FROM unnest(${relations}::text[]) AS n
               UNION SELECT indexrelid FROM pg_index
                      WHERE indrelid IN (SELECT to_regclass(n) FROM unnest(${relations}::text[]) AS n))
    SELECT oid::regclass::text AS rel FROM r
     WHERE position(convert_to(${marker}, 'UTF8') IN pg_read_binary_file(pg_relation_filepath(oid))) > 0
     ORDER BY 1`;
  return rows.map((row) => row.rel);
}
