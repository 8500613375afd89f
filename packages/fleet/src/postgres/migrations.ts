import { SCHEMA_MIGRATIONS_TABLE, latestVersion, type Migration, type MigrationOutcome } from '@sluice/store';
import type { Sql } from 'postgres';
import { StoreSchemaTooNewError } from './errors.js';

/** The row of `sluice_schema_migrations` that belongs to the PostgreSQL backend. */
export const STORE_COMPONENT = 'fleet.postgres';

/**
 * The backend's migrations, oldest first. Released entries never change; new ones are appended.
 * Times are wall-clock epoch milliseconds (`bigint`), as the nodes' clocks give them.
 */
export const STORE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
      -- One row per running daemon (a node), renewed while it lives: a node whose lease expired
      -- is dead, and the first live node to see it settles its calls and frees its sessions.
      CREATE TABLE sluice_nodes (
        node_id text PRIMARY KEY,
        advertise_url text,
        started_at bigint NOT NULL,
        expires_at bigint NOT NULL
      );
      -- The journal (docs/decisions/002): one row per record, its JSON body whole, the columns
      -- the reads and the reconcile need beside it. The key allows one request and one result
      -- per call. \`seq\` only orders the records of a read (commit order within a node); rows
      -- are found by call, task, session or node, so it has no index to maintain.
      CREATE TABLE sluice_journal_records (
        seq bigint GENERATED ALWAYS AS IDENTITY,
        node_id text NOT NULL,
        type text NOT NULL CHECK (type IN ('model_request', 'model_result')),
        call_id text NOT NULL,
        task_id text NOT NULL,
        session_id text,
        turn_id text,
        at text NOT NULL,
        body jsonb NOT NULL,
        PRIMARY KEY (call_id, type)
      );
      CREATE INDEX sluice_journal_records_task ON sluice_journal_records (task_id)
        WHERE task_id <> 'tmp-' || call_id;
      CREATE INDEX sluice_journal_records_session ON sluice_journal_records (session_id, turn_id)
        WHERE session_id IS NOT NULL;
      CREATE INDEX sluice_journal_records_node_requests ON sluice_journal_records (node_id)
        WHERE type = 'model_request';
      -- Sessions (docs/decisions/006): metadata row, messages [first_seq, next_seq).
      CREATE TABLE sluice_sessions (
        session_id text PRIMARY KEY,
        workspace_cwd text NOT NULL,
        cwd text NOT NULL,
        scope text NOT NULL CHECK (scope IN ('single', 'thread')),
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        display_name text,
        forked_from_session_id text,
        first_seq bigint NOT NULL,
        next_seq bigint NOT NULL,
        revision bigint NOT NULL,
        saved_order bigint NOT NULL
      );
      CREATE INDEX sluice_sessions_workspace ON sluice_sessions (workspace_cwd, created_at, session_id);
      CREATE INDEX sluice_sessions_saved_order ON sluice_sessions (saved_order);
      CREATE SEQUENCE sluice_sessions_saved_order_seq;
      CREATE TABLE sluice_session_messages (
        session_id text NOT NULL,
        seq bigint NOT NULL,
        role text NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
        content text NOT NULL,
        name text,
        tool_call_id text,
        PRIMARY KEY (session_id, seq)
      );
      -- The admission ledger: prompts answered 202 that have not ended (decision 016).
      CREATE TABLE sluice_session_accepted_prompts (
        session_id text NOT NULL,
        prompt_id text NOT NULL,
        accepted_at bigint NOT NULL,
        PRIMARY KEY (session_id, prompt_id)
      );
      -- Which node has a session live. Its lease is its node's: when the node dies, the row
      -- goes with it and another node may load the session.
      CREATE TABLE sluice_session_owners (
        session_id text PRIMARY KEY,
        node_id text NOT NULL REFERENCES sluice_nodes (node_id) ON DELETE CASCADE
      );
      CREATE INDEX sluice_session_owners_node ON sluice_session_owners (node_id);
    `,
  },
  {
    // Durable task budgets (issue 21): one row per budget, its limits as JSON text. Its spend is
    // the journal's records with task_id = budget_id, shared by every node.
    version: 2,
    sql: `
      CREATE TABLE sluice_budgets (
        budget_id text PRIMARY KEY,
        limits text NOT NULL,
        created_at bigint NOT NULL
      );
    `,
  },
  {
    // A session's catalogue model (issue 29 item 4); NULL for the default, as for every
    // session stored before sessions picked a model.
    version: 3,
    sql: `ALTER TABLE sluice_sessions ADD COLUMN model text;`,
  },
];

/** The schema version this build writes and reads. */
export const STORE_SCHEMA_VERSION = latestVersion(STORE_MIGRATIONS);

/** Serialises migrations of one database across nodes starting at once. */
const MIGRATION_LOCK = 0x51_75_1c_e0;

/**
 * Applies the migrations newer than the recorded version in one transaction, under an advisory
 * lock, so nodes starting together migrate once and a failing step changes nothing. Throws
 * {@link StoreSchemaTooNewError} when the database was migrated by a newer build.
 */
export async function migrateStore(
  sql: Sql,
  store: string,
  migrations: readonly Migration[] = STORE_MIGRATIONS,
): Promise<MigrationOutcome> {
  const latest = latestVersion(migrations);
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    const table = tx.unsafe(SCHEMA_MIGRATIONS_TABLE);
    await tx`CREATE TABLE IF NOT EXISTS ${table} (
      component text PRIMARY KEY,
      version integer NOT NULL
    )`;
    const [row] = await tx<{ version: number }[]>`
      SELECT version FROM ${table} WHERE component = ${STORE_COMPONENT}`;
    const from = row?.version ?? 0;
    if (from > latest) throw new StoreSchemaTooNewError(store, from, latest);
    for (const migration of migrations) if (migration.version > from) await tx.unsafe(migration.sql);
    if (latest > from)
      await tx`INSERT INTO ${table} (component, version) VALUES (${STORE_COMPONENT}, ${latest})
        ON CONFLICT (component) DO UPDATE SET version = excluded.version`;
    return { from, to: latest };
  });
}
