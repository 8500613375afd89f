// `npm run bench`: every benchmark side by side with its baseline; writes BENCHMARKS.md, each
// section with its own date, load and command (bench/sections.js). `--only=id,…` runs those
// producers (or groups, e.g. `daemon`) and rewrites just their sections; `--quick` is a smoke run
// whose figures are not written unless `--write` is given as well.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { benchAgents } from './agents.js';
import { benchDaemon } from './daemon.js';
import { benchFleet } from './fleet.js';
import { benchGateway } from './gateway.js';
import { benchJournal } from './journal.js';
import { benchJournalSize } from './journal-size.js';
import { benchModels } from './models.js';
import { benchPgJournal } from './pgjournal.js';
import { benchPgPurge } from './pgpurge.js';
import { benchScheduler } from './scheduler.js';
import { benchWeb } from './web.js';
import { composeBenchmarks, measureSection } from './sections.js';

/** Every producer of a BENCHMARKS.md section, in the file's order: the one list of them. */
export const PRODUCERS = [
  {
    id: 'scheduler',
    title: 'Model scheduler overhead',
    slow: true,
    run: async ({ quick }) => (await benchScheduler({ quick })).markdown,
  },
  {
    id: 'journal',
    title: 'Recorded calls with the SQLite journal',
    run: async ({ quick }) => (await benchJournal({ quick })).markdown,
  },
  {
    id: 'size',
    title: 'Journal size per recorded call',
    run: async ({ quick }) => (await benchJournalSize({ quick })).markdown,
  },
  {
    id: 'pgjournal',
    title: 'Recorded calls with the PostgreSQL journal (--store)',
    run: async ({ quick }) => (await benchPgJournal({ quick })).markdown,
  },
  {
    id: 'pgpurge',
    title: 'Purging a session on PostgreSQL (--store-purge-vacuum)',
    run: async ({ quick }) => (await benchPgPurge({ quick })).markdown,
  },
  ...[
    ['503', 'The daemon over HTTP: 503 under load'],
    ['prompts', 'The daemon over HTTP: prompts end to end'],
    ['memory', 'The daemon over HTTP: memory'],
    ['startup', 'The daemon over HTTP: start-up'],
  ].map(([part, title]) => ({
    id: part,
    group: 'daemon',
    title,
    run: async ({ quick }) => (await benchDaemon({ quick, parts: [part] })).markdown,
  })),
  {
    id: 'gateway',
    title: 'The model gateway',
    run: async ({ quick }) => (await benchGateway({ quick })).markdown,
  },
  {
    id: 'models',
    title: 'Two models, each its own slots',
    run: async ({ quick }) => (await benchModels({ quick })).markdown,
  },
  {
    id: 'fleet',
    title: 'Model limits shared by a fleet (Redis)',
    run: async ({ quick }) => (await benchFleet({ quick })).markdown,
  },
  {
    id: 'web',
    title: 'The web client: first paint and frame time',
    run: async ({ quick }) => (await benchWeb({ quick })).markdown,
  },
  {
    id: 'agents',
    title: 'Real agents: `qwen serve` and Sluice side by side',
    run: async ({ quick }) => (await benchAgents({ quick })).markdown,
  },
];

const HEADER = [
  '# Benchmarks',
  '',
  'Written by `npm run bench` (which builds, then runs `node --expose-gc bench/run.js`): every figure is',
  'measured side by side with its baseline in the same run; compare ratios, not absolute numbers, across',
  'machines. Each section names its own run (date, duration, load average before → after) and the',
  'command that rewrites it alone; `scripts/benchmarks.test.ts` fails when a section has no producer.',
].join('\n');

async function main(argv) {
  const quick = argv.includes('--quick');
  const only = argv
    .find((arg) => arg.startsWith('--only='))
    ?.slice('--only='.length)
    .split(',');
  const chosen = PRODUCERS.filter(
    (p) => only === undefined || only.includes(p.id) || (p.group !== undefined && only.includes(p.group)),
  );
  if (only !== undefined && chosen.length === 0)
    throw new Error(
      `--only=${only.join(',')} names no producer; known: ${PRODUCERS.map((p) => p.id).join(', ')}`,
    );
  const file = new URL('../BENCHMARKS.md', import.meta.url);
  const machine = `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const writing = !quick || argv.includes('--write');
  const fresh = new Map();
  // The slowest producer runs last, and the file is rewritten after each section: an
  // interrupted run keeps what it measured.
  for (const producer of [...chosen].sort((a, b) => Number(a.slow === true) - Number(b.slow === true))) {
    console.error(`${producer.id}: ${producer.title} …`);
    fresh.set(producer.id, await measureSection(producer, () => producer.run({ quick })));
    console.log(fresh.get(producer.id));
    if (!writing) continue;
    const previous = existsSync(file) ? readFileSync(file, 'utf8') : '';
    writeFileSync(
      file,
      composeBenchmarks({
        header: `${HEADER}\n\nMachine: ${machine}.`,
        order: PRODUCERS.map((p) => p.id),
        fresh,
        previous,
      }),
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main(process.argv.slice(2));
