// Journal throughput: recorded calls/s through Sluice's runtime (built-in `echo` model at 0 ms)
// with the durable SqliteJournal, next to the same runtime with a bounded in-memory journal, and
// the event loop's delay while each runs; plus raw SqliteJournal appends/s. A journal must never
// stall the process that admits work.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clearInterval, setInterval } from 'node:timers';
import { pathToFileURL } from 'node:url';
import {
  CallIdGenerator,
  EchoProvider,
  MemoryJournal,
  ModelRuntime,
  SqliteJournal,
} from '../packages/runtime/dist/index.js';
import { closedLoop, fmt, medianBy, met, table, withLoopDelay } from './lib.js';

const request = { messages: [{ role: 'user', content: 'ping' }] };
/** Enough calls outstanding to keep a batch filling while the previous one commits. */
/** The scheduler every recorded-calls bench runs with (bench/pgjournal.js too). */
export const SCHEDULER = { maxConcurrency: 512, maxQueued: 512, maxInflight: 1024 };
const WORKERS = 512;
const RAW_WORKERS = 2048;
const TARGET_CALLS = 50_000;
const TARGET_P99_MS = 10;

/** A runtime over `journal` whose `call` is one recorded echo call (shared with bench/pgjournal.js). */
export function runtimeWith(journal) {
  const runtime = new ModelRuntime({ provider: new EchoProvider(), journal, scheduler: SCHEDULER });
  return { journal, call: () => runtime.complete(request), close: () => runtime.shutdown() };
}

/** Records shaped like the runtime's own: one request and one result per call (~300 bytes each). */
export function rawAppender(journal) {
  const ids = new CallIdGenerator();
  let pendingResult;
  return () => {
    if (pendingResult) {
      const record = pendingResult;
      pendingResult = undefined;
      return journal.append(record);
    }
    const callId = ids.next();
    const taskId = `tmp-${callId}`;
    const at = new Date().toISOString();
    pendingResult = {
      version: 1,
      type: 'model_result',
      callId,
      taskId,
      at,
      outcome: 'success',
      durationMs: 1,
      stopReason: 'end_turn',
      usage: { inputTokens: 1, outputTokens: 2 },
      text: 'Echo: ping',
    };
    return journal.append({
      version: 1,
      type: 'model_request',
      callId,
      taskId,
      at,
      request,
      options: { timeoutMs: 600_000, provider: 'echo', model: 'echo-1', kind: 'complete' },
    });
  };
}

/**
 * Runs `rounds` closed-loop rounds after a warm-up and returns the median rate, the median
 * round's delay p99 and the worst delay max. `turns` counts 1 ms timer ticks: a journal that
 * confirms synchronously keeps the loop from turning at all, and then the histogram is empty.
 */
export async function measure(rounds, total, workers, call) {
  await closedLoop(Math.min(total, 20_000), workers, call);
  const samples = [];
  for (let i = 0; i < rounds; i++) {
    let turns = 0;
    const ticker = setInterval(() => turns++, 1);
    const { result: rate, p99Ms, maxMs } = await withLoopDelay(() => closedLoop(total, workers, call));
    clearInterval(ticker);
    samples.push({ rate, p99Ms, maxMs, turns });
  }
  const median = medianBy(samples, (sample) => sample.rate);
  return {
    rate: median.rate,
    p99Ms: median.p99Ms,
    maxMs: Math.max(...samples.map((s) => s.maxMs)),
    loopTurned: samples.every((s) => s.turns > 0),
  };
}

/** Returns the markdown section and the raw figures. */
export async function benchJournal({ quick = false } = {}) {
  const calls = quick ? 40_000 : 200_000;
  const rounds = quick ? 3 : 5;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-journal-'));
  const results = [];
  try {
    const subjects = [
      [
        'runtime + SqliteJournal',
        'calls/s',
        WORKERS,
        () => runtimeWith(new SqliteJournal({ path: path.join(dir, 'runtime.db') })),
      ],
      [
        'runtime + MemoryJournal (4 096, evict)',
        'calls/s',
        WORKERS,
        () => runtimeWith(new MemoryJournal({ maxRecords: 4_096, whenFull: 'evict' })),
      ],
      [
        'raw SqliteJournal.append',
        'records/s',
        RAW_WORKERS,
        () => {
          const journal = new SqliteJournal({ path: path.join(dir, 'raw.db') });
          return { journal, call: rawAppender(journal), close: () => undefined };
        },
      ],
    ];
    for (const [name, unit, workers, make] of subjects) {
      const subject = make();
      try {
        const total = unit === 'records/s' ? calls * 2 : calls;
        const figures = await measure(rounds, total, workers, subject.call);
        const stats = typeof subject.journal.stats === 'function' ? subject.journal.stats() : undefined;
        results.push({ name, unit, workers, ...figures, stats });
      } finally {
        await subject.close();
        await subject.journal.close();
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }

  const [sqlite, memory] = results;
  const delay = (r, field) => (r.loopTurned ? `${fmt(r[field], 1)} ms` : 'n/a (loop never turned)');
  const rows = results.map((r) => [
    r.name,
    `${fmt(r.rate)} ${r.unit}`,
    fmt(r.workers),
    delay(r, 'p99Ms'),
    delay(r, 'maxMs'),
    r.stats ? fmt(r.stats.recordsCommitted / Math.max(1, r.stats.batchesCommitted)) : '–',
  ]);
  const markdown = [
    `Recorded model calls (built-in \`echo\` model at 0 ms; one \`model_request\` and one \`model_result\` record per call, ` +
      `each confirmed before the call proceeds) in a closed loop of ${fmt(calls)} calls; ` +
      `scheduler \`${JSON.stringify(SCHEDULER)}\`, ${fmt(WORKERS)} callers outstanding. Raw appends: ` +
      `${fmt(calls * 2)} runtime-shaped records, ${fmt(RAW_WORKERS)} outstanding. SqliteJournal with its defaults ` +
      `(WAL, synchronous NORMAL, group commit in a worker thread) in a temporary directory. ` +
      `Median of ${rounds} rounds after a warm-up; delay p99 of the median round, max over all rounds ` +
      `(\`monitorEventLoopDelay\`, 1 ms resolution).`,
    '',
    table(
      ['subject', 'throughput', 'outstanding', 'loop delay p99', 'loop delay max', 'records/commit'],
      rows,
    ),
    '',
    `Targets: ≥ ${fmt(TARGET_CALLS)} recorded calls/s with SQLite — **${fmt(sqlite.rate)}** ` +
      `(${fmt((sqlite.rate / memory.rate) * 100, 0)} % of the in-memory baseline), ${met(sqlite.rate >= TARGET_CALLS)}; ` +
      `event-loop delay p99 < ${TARGET_P99_MS} ms — **${fmt(sqlite.p99Ms, 1)} ms**, ${met(sqlite.loopTurned && sqlite.p99Ms < TARGET_P99_MS)}.` +
      (memory.loopTurned
        ? ''
        : ' The in-memory journal confirms synchronously, so its closed loop is one chain of microtasks that never ' +
          'yields to the event loop: it has no delay samples because the loop is held for the whole run.'),
  ].join('\n');
  return { markdown, results };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { markdown } = await benchJournal({ quick: process.argv.includes('--quick') });
  console.log(markdown);
}
