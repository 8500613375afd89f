import type { JournalEntry, JournalFilter, JournalRecord } from '@sluice/runtime';
import { SCHEMA_MIGRATIONS_TABLE } from '@sluice/store';
import postgres, { type PendingQuery, type Row, type Sql } from 'postgres';
import { StoreSchemaTooNewError, StoreUnreachableError } from './errors.js';
import { STORE_COMPONENT, STORE_SCHEMA_VERSION } from './migrations.js';
import { parseStoreUrl, redactStoreUrl } from './store-url.js';

/** How long a read waits for the database to accept its connection. */
const CONNECT_TIMEOUT_S = 10;

/**
 * A read-only view of a fleet's journal with filters, for `sluice journal --store`: one
 * connection, plain `SELECT`s, no node lease and no migration, so it reads beside running
 * daemons and never changes the database. A database no daemon has migrated reads as empty.
 */
export class PostgresJournalQuery {
  private constructor(
    private readonly sql: Sql,
    private readonly where: PendingQuery<Row[]>,
    private readonly empty: boolean,
  ) {}

  /**
   * Connects to `url` (its `search_path` names the schema) and checks the schema version; throws
   * {@link StoreUnreachableError} or {@link StoreSchemaTooNewError}, a `RangeError` for a bad URL.
   */
  static async open(url: string, filter: JournalFilter): Promise<PostgresJournalQuery> {
    parseStoreUrl('--store', url);
    const store = redactStoreUrl(url);
    const sql = postgres(url, { max: 1, connect_timeout: CONNECT_TIMEOUT_S, onnotice: () => {} });
    let version: number;
    try {
      version = await schemaVersion(sql);
    } catch (error) {
      await sql.end({ timeout: 1 }).catch(() => {});
      throw new StoreUnreachableError(store, (error as Error).message, { cause: error });
    }
    if (version > STORE_SCHEMA_VERSION) {
      await sql.end({ timeout: 1 });
      throw new StoreSchemaTooNewError(store, version, STORE_SCHEMA_VERSION);
    }
    return new PostgresJournalQuery(sql, whereClause(sql, filter), version === 0);
  }

  /** The newest `limit` matching records (all when `limit` is 0), oldest first. */
  async tail(limit: number): Promise<JournalEntry[]> {
    if (this.empty) return [];
    const rows = await this.sql<{ seq: number; body: JournalRecord }[]>`
      SELECT seq::float8 AS seq, body FROM sluice_journal_records WHERE ${this.where}
      ORDER BY seq DESC ${limit === 0 ? this.sql`` : this.sql`LIMIT ${limit}`}`;
    return rows.reverse().map(({ seq, body }) => ({ seq, record: body }));
  }

  /** Matching records after `seq`, oldest first, at most `limit`. */
  async after(seq: number, limit: number): Promise<JournalEntry[]> {
    if (this.empty) return [];
    const rows = await this.sql<{ seq: number; body: JournalRecord }[]>`
      SELECT seq::float8 AS seq, body FROM sluice_journal_records
      WHERE seq > ${seq} AND ${this.where} ORDER BY seq LIMIT ${limit}`;
    return rows.map((row) => ({ seq: row.seq, record: row.body }));
  }

  /** The highest `seq` in the journal, matching or not (0 when empty). */
  async lastSeq(): Promise<number> {
    if (this.empty) return 0;
    const [row] = await this.sql<{ seq: number }[]>`
      SELECT coalesce(max(seq), 0)::float8 AS seq FROM sluice_journal_records`;
    return row?.seq ?? 0;
  }

  async close(): Promise<void> {
    await this.sql.end({ timeout: 5 });
  }
}

/** The store's schema version, 0 when no daemon has migrated this database (or schema) yet. */
async function schemaVersion(sql: Sql): Promise<number> {
  const [table] = await sql<{ name: string | null }[]>`
    SELECT to_regclass(${SCHEMA_MIGRATIONS_TABLE})::text AS name`;
  if (table?.name === null || table?.name === undefined) return 0;
  const [row] = await sql<{ version: number }[]>`
    SELECT version FROM ${sql(SCHEMA_MIGRATIONS_TABLE)} WHERE component = ${STORE_COMPONENT}`;
  return row?.version ?? 0;
}

/** The condition of `filter`: the indexed `session_id`/`turn_id` columns, then the body's fields. */
function whereClause(sql: Sql, filter: JournalFilter): PendingQuery<Row[]> {
  const terms: Array<PendingQuery<Row[]>> = [];
  const { sessionId, promptId, code, sinceMs, untilMs } = filter;
  if (sessionId !== undefined) terms.push(sql`session_id = ${sessionId}`);
  if (promptId !== undefined)
    // Only a call's request names the prompt: its result is found through the call id.
    terms.push(sql`call_id IN (SELECT call_id FROM sluice_journal_records
      WHERE turn_id = ${promptId} AND type = 'model_request'
      ${sessionId === undefined ? sql`` : sql`AND session_id = ${sessionId}`})`);
  if (code !== undefined)
    terms.push(sql`(body->>'stopReason' = ${code} OR body->'error'->>'code' = ${code})`);
  // `at` is ISO 8601 in UTC with milliseconds, so text order is time order.
  if (sinceMs !== undefined) terms.push(sql`at >= ${new Date(sinceMs).toISOString()}`);
  if (untilMs !== undefined) terms.push(sql`at < ${new Date(untilMs).toISOString()}`);
  return terms.reduce((all, term) => sql`${all} AND ${term}`, sql`TRUE`);
}
