// What a purge costs on PostgreSQL (`--store`, docs/decisions/036): `DELETE /session/:id?purge=true`
// deletes the session's rows and then VACUUMs the tables that hold text, plain by default or FULL
// with `--store-purge-vacuum full`. Measures the purge itself and the longest a concurrent journal
// write waited meanwhile, on a store of realistic size. Skipped, with a note, without PostgreSQL.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import postgres from 'postgres';
import { openPostgresFleet } from '../packages/fleet/dist/index.js';
import { fmt, table } from './lib.js';

const PG_URL = process.env.SLUICE_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PURGES = 5;
const MESSAGES_PER_SESSION = 20;

/** Fills the store's tables: `sessions` sessions of 20 messages, each turn a journaled call. */
async function fill(sql, sessions) {
  await sql`INSERT INTO sluice_sessions (session_id, workspace_cwd, cwd, scope, created_at, updated_at,
      first_seq, next_seq, revision, saved_order)
    SELECT 's-' || g, '/ws', '/ws', 'thread', g, g, 0, ${MESSAGES_PER_SESSION}, 1, g
      FROM generate_series(1, ${sessions}) g`;
  await sql`INSERT INTO sluice_session_messages (session_id, seq, role, content)
    SELECT 's-' || g, m, CASE WHEN m % 2 = 0 THEN 'user' ELSE 'assistant' END,
           'turn ' || m || ' ' || repeat(md5(g::text || m::text), 16)
      FROM generate_series(1, ${sessions}) g, generate_series(0, ${MESSAGES_PER_SESSION - 1}) m`;
  await sql`INSERT INTO sluice_journal_records (node_id, type, call_id, task_id, session_id, turn_id, at, body)
    SELECT 'bench', t, 'c-' || g || '-' || m, 'tmp-c-' || g || '-' || m, 's-' || g, 'p-' || m, '2026-12-03',
           jsonb_build_object('messages', jsonb_build_array(jsonb_build_object('role', 'user',
             'content', repeat(md5(g::text || m::text), 16))))
      FROM generate_series(1, ${sessions}) g, generate_series(0, ${MESSAGES_PER_SESSION / 2 - 1}) m,
           unnest(ARRAY['model_request', 'model_result']) t`;
  // The steady state autovacuum leaves: every page all-visible, statistics current.
  await sql`VACUUM ANALYZE sluice_sessions, sluice_session_messages, sluice_journal_records`;
  const [size] = await sql`SELECT pg_total_relation_size('sluice_journal_records')
    + pg_total_relation_size('sluice_session_messages') + pg_total_relation_size('sluice_sessions') AS bytes`;
  return Number(size.bytes);
}

/** Journal-shaped inserts on their own connection, one after another, until `stop()`; the slowest. */
function writer(sql) {
  let running = true;
  let slowest = 0;
  let n = 0;
  const done = (async () => {
    while (running) {
      const started = performance.now();
      await sql`INSERT INTO sluice_journal_records (node_id, type, call_id, task_id, at, body)
        VALUES ('bench-writer', 'model_request', ${`w-${n++}`}, 'tmp-w', '2026-12-03', '{}')`;
      slowest = Math.max(slowest, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await done;
      return { slowest, writes: n };
    },
  };
}

async function measureMode(mode, sessions) {
  const schema = `sluice_bench_purge_${randomBytes(4).toString('hex')}`;
  const fleet = await openPostgresFleet({ url: PG_URL, schema, purgeVacuum: mode, maxSessions: Infinity });
  const sql = postgres(PG_URL, { max: 1, onnotice: () => {}, connection: { search_path: schema } });
  const writes = postgres(PG_URL, { max: 1, onnotice: () => {}, connection: { search_path: schema } });
  try {
    const bytes = await fill(sql, sessions);
    const load = writer(writes);
    const times = [];
    for (let i = 1; i <= PURGES; i++) {
      const started = performance.now();
      await fleet.store.delete(`s-${i * Math.floor(sessions / PURGES)}`);
      times.push(performance.now() - started);
    }
    const { slowest, writes: written } = await load.stop();
    times.sort((a, b) => a - b);
    return { mode, bytes, median: times[Math.floor(times.length / 2)], max: times.at(-1), slowest, written };
  } finally {
    await fleet.close();
    await sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`;
    await sql.end();
    await writes.end();
  }
}

/** Returns the markdown section and the raw figures. */
export async function benchPgPurge({ quick = false } = {}) {
  const probe = postgres(PG_URL, { max: 1, connect_timeout: 2, onnotice: () => {} });
  const unreachable = await probe`SELECT 1`.then(
    () => undefined,
    (error) => error.message,
  );
  await probe.end({ timeout: 1 }).catch(() => {});
  if (unreachable !== undefined)
    return {
      markdown: `Skipped: PostgreSQL is unreachable at \`${PG_URL}\` (${unreachable}); set \`SLUICE_BENCH_PG_URL\`.`,
      results: [],
    };
  const sessions = quick ? 1_000 : 10_000;
  const results = [];
  for (const mode of ['plain', 'full']) results.push(await measureMode(mode, sessions));
  const rows = results.map((r) => [
    `\`--store-purge-vacuum ${r.mode}\``,
    `${fmt(r.bytes / 2 ** 20)} MiB`,
    `${fmt(r.median)} ms`,
    `${fmt(r.max)} ms`,
    `${fmt(r.slowest)} ms`,
    fmt(r.written),
  ]);
  const markdown = [
    `${fmt(sessions)} stored sessions of ${MESSAGES_PER_SESSION} messages (≈ 0.5 KiB each) and ` +
      `${fmt((sessions * MESSAGES_PER_SESSION) / 2)} journaled calls (a request and a result record each), vacuumed ` +
      `and analysed as autovacuum would leave them, in a fresh schema on \`${PG_URL.replace(/:[^:@/]*@/, ':***@')}\`. ` +
      `${PURGES} purges one after another (\`PostgresSessionStore.delete\`: the delete, then the VACUUM), while ` +
      `another connection inserts journal rows one after another (2 ms apart): its slowest insert is what the ` +
      `purges made the fleet's writes wait.`,
    '',
    table(
      ['mode', 'tables + indexes', 'purge, median', 'purge, slowest', 'slowest concurrent insert', 'inserts'],
      rows,
    ),
  ].join('\n');
  return { markdown, results };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { markdown } = await benchPgPurge({ quick: process.argv.includes('--quick') });
  console.log(markdown);
}
