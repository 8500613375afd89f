// The PostgreSQL journal (`--store postgres://…`, packages/fleet) against the SQLite journal, same
// workload in the same run: recorded calls/s through Sluice's runtime (built-in `echo` model at
// 0 ms), and raw appends/s. Skipped, with a note, when PostgreSQL is unreachable.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import postgres from 'postgres';
import { openPostgresFleet } from '../packages/fleet/dist/index.js';
import { SqliteJournal } from '../packages/runtime/dist/index.js';
import { SCHEDULER, measure, rawAppender, runtimeWith } from './journal.js';
import { fmt, met, table } from './lib.js';

const PG_URL = process.env.SLUICE_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const WORKERS = 512;
const RAW_WORKERS = 2048;
const TARGET_CALLS = 20_000;

async function reachable() {
  const sql = postgres(PG_URL, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    await sql`SELECT 1`;
    return undefined;
  } catch (error) {
    return error.message;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

/** Returns the markdown section and the raw figures. */
export async function benchPgJournal({ quick = false } = {}) {
  const unreachable = await reachable();
  if (unreachable !== undefined)
    return {
      markdown: `Skipped: PostgreSQL is unreachable at \`${PG_URL}\` (${unreachable}); set \`SLUICE_BENCH_PG_URL\`.`,
      results: [],
    };
  const calls = quick ? 20_000 : 100_000;
  const rounds = quick ? 2 : 3;
  const schema = `sluice_bench_${randomBytes(4).toString('hex')}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-pgjournal-'));
  const fleets = [];
  const postgresJournal = async () => {
    const fleet = await openPostgresFleet({ url: PG_URL, schema });
    fleets.push(fleet);
    return fleet.journal;
  };
  const subjects = [
    [
      'runtime + SqliteJournal',
      'calls/s',
      WORKERS,
      async () => new SqliteJournal({ path: path.join(dir, 'runtime.db') }),
      runtimeWith,
    ],
    ['runtime + PostgresJournal', 'calls/s', WORKERS, postgresJournal, runtimeWith],
    [
      'raw SqliteJournal.append',
      'records/s',
      RAW_WORKERS,
      async () => new SqliteJournal({ path: path.join(dir, 'raw.db') }),
      (j) => ({ call: rawAppender(j), close: () => undefined }),
    ],
    [
      'raw PostgresJournal.append',
      'records/s',
      RAW_WORKERS,
      postgresJournal,
      (j) => ({ call: rawAppender(j), close: () => undefined }),
    ],
  ];
  const results = [];
  try {
    for (const [name, unit, workers, open, drive] of subjects) {
      const journal = await open();
      const subject = drive(journal);
      try {
        const total = unit === 'records/s' ? calls * 2 : calls;
        const figures = await measure(rounds, total, workers, subject.call);
        results.push({ name, unit, workers, ...figures, stats: journal.stats() });
      } finally {
        await subject.close();
        await journal.close();
      }
    }
  } finally {
    await Promise.all(fleets.map((fleet) => fleet.close()));
    const sql = postgres(PG_URL, { max: 1, onnotice: () => {} });
    await sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`;
    await sql.end();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const [sqlite, pg] = results;
  const rows = results.map((r) => [
    r.name,
    `${fmt(r.rate)} ${r.unit}`,
    fmt(r.workers),
    `${fmt(r.p99Ms, 1)} ms`,
    fmt(r.stats.recordsCommitted / Math.max(1, r.stats.batchesCommitted)),
  ]);
  const markdown = [
    `The same workload as the SQLite journal's section, on each journal in turn: recorded model calls (built-in \`echo\` ` +
      `model at 0 ms; a \`model_request\` and a \`model_result\` record per call, each confirmed committed before the call ` +
      `proceeds) in a closed loop of ${fmt(calls)} calls, scheduler \`${JSON.stringify(SCHEDULER)}\`, ${fmt(WORKERS)} callers ` +
      `outstanding; raw appends: ${fmt(calls * 2)} runtime-shaped records, ${fmt(RAW_WORKERS)} outstanding. PostgresJournal ` +
      `with its defaults (pool of 4, up to 4 batches of ≤ 2,048 records in flight, one per connection, one \`INSERT … SELECT FROM ` +
      `jsonb_array_elements\` per batch, \`synchronous_commit = on\`) on \`${PG_URL.replace(/:[^:@/]*@/, ':***@')}\` (PostgreSQL on this machine), ` +
      `in a fresh schema; SqliteJournal with its defaults in a temporary directory. Median of ${rounds} rounds after a warm-up.`,
    '',
    table(['subject', 'throughput', 'outstanding', 'loop delay p99', 'records/commit'], rows),
    '',
    `Target: ≥ ${fmt(TARGET_CALLS)} recorded calls/s on PostgreSQL — **${fmt(pg.rate)}** ` +
      `(${fmt((pg.rate / sqlite.rate) * 100, 0)} % of SQLite's in the same run), ${met(pg.rate >= TARGET_CALLS)}.`,
  ].join('\n');
  return { markdown, results };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { markdown } = await benchPgJournal({ quick: process.argv.includes('--quick') });
  console.log(markdown);
}
