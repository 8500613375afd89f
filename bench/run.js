// `npm run bench`: every benchmark side by side with its baseline, in one run; writes
// BENCHMARKS.md with the figures, the command and the machine. Every section ends with the
// command, the time and the machine's load it was measured with. `--quick` for a smoke run
// (figures not written unless `--write` is given as well).
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { benchAgents } from './agents.js';
import { benchDaemon } from './daemon.js';
import { benchFleet } from './fleet.js';
import { benchGateway } from './gateway.js';
import { benchJournal } from './journal.js';
import { benchJournalSize } from './journal-size.js';
import { benchPgJournal } from './pgjournal.js';
import { replaceSection } from './lib.js';
import { benchScheduler } from './scheduler.js';

const quick = process.argv.includes('--quick');
// `--only=scheduler,journal,size,pgjournal,daemon,gateway,fleet,agents` (or a daemon part: `503`, `prompts`,
// `memory`, `startup`) runs a subset; a subset rewrites only its own sections of BENCHMARKS.md (a
// daemon section of some of its parts none), or nothing with `--quick` or `--no-write`.
const only = process.argv
  .find((arg) => arg.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
const runs = (name) => only === undefined || only.includes(name);
const write = !process.argv.includes('--no-write') && (!quick || process.argv.includes('--write'));
const machine = `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
/** How this run was started, as a reader would repeat it (the bench's environment variables included). */
const command = [
  ...Object.entries(process.env)
    .filter(([name]) => name.startsWith('BENCH_'))
    .map(([name, value]) => `${name}=${JSON.stringify(value)}`),
  'node --expose-gc bench/run.js',
  ...process.argv.slice(2),
].join(' ');

const sections = [];
const started = Date.now();
/** Runs one benchmark and keeps its section, stamped with the command, time and load it ran under. */
async function section(title, progress, run, { partial = false } = {}) {
  console.error(progress);
  const [load] = loadavg();
  const at = new Date();
  const markdown = await run();
  const stamp =
    `_Measured by \`${command}\` (after \`npm run build\`), ${at.toISOString().slice(0, 16)}Z, ` +
    `${Math.round((Date.now() - at.getTime()) / 1000)} s, on ${machine}; load average ${load.toFixed(1)} at the ` +
    `start, ${loadavg()[0].toFixed(1)} at the end._`;
  sections.push({ title, markdown: `${markdown}\n\n${stamp}`, partial });
}

const daemonParts = ['503', 'prompts', 'memory', 'startup'].filter((part) => runs('daemon') || runs(part));
/** Every benchmark: whether it runs, its section's title, its progress line, and the run itself. */
const benches = [
  [
    runs('scheduler'),
    'Model scheduler overhead',
    'scheduler: Sluice vs p-limit vs p-queue …',
    benchScheduler,
  ],
  [runs('journal'), 'Recorded calls with the SQLite journal', 'journal: SQLite vs in-memory …', benchJournal],
  [
    runs('size'),
    'Journal size per recorded call',
    'size: journal.db bytes per recorded call …',
    benchJournalSize,
  ],
  [
    runs('pgjournal'),
    'Recorded calls with the PostgreSQL journal (--store)',
    'pgjournal: PostgreSQL journal vs SQLite journal …',
    benchPgJournal,
  ],
  [
    daemonParts.length > 0,
    'The daemon over HTTP',
    'daemon: sluice serve vs bare node:http …',
    (options) => benchDaemon({ ...options, parts: daemonParts }),
    { partial: daemonParts.length < 4 },
  ],
  [
    runs('gateway'),
    'The model gateway',
    'gateway: /v1/chat/completions vs the upstream directly …',
    benchGateway,
  ],
  [
    runs('fleet'),
    'Model limits shared by a fleet (Redis)',
    'fleet: model limits shared through Redis vs in process …',
    benchFleet,
  ],
  [
    runs('agents'),
    'Real agents: `qwen serve` and Sluice side by side',
    'agents: qwen serve vs sluice serve --agent, the real qwen --acp …',
    benchAgents,
  ],
];
for (const [selected, title, progress, bench, options] of benches)
  if (selected) await section(title, progress, async () => (await bench({ quick })).markdown, options);

const body = [
  '# Benchmarks',
  '',
  'Produced by `npm run bench` (which builds, then runs `node --expose-gc bench/run.js`). Every figure is measured',
  'side by side with its baseline in the same run; compare ratios, not absolute numbers, across machines.',
  '',
  `Machine: ${machine}. Run: ${new Date(started).toISOString()}, ${Math.round((Date.now() - started) / 1000)} s.`,
  '',
  ...sections.flatMap(({ title, markdown }) => [`## ${title}`, '', markdown, '']),
].join('\n');

console.log(body);
const file = new URL('../BENCHMARKS.md', import.meta.url);
if (write && only === undefined) writeFileSync(file, body);
else if (write)
  writeFileSync(
    file,
    sections
      .filter(({ partial }) => !partial)
      .reduce(
        (document, { title, markdown }) => replaceSection(document, title, markdown),
        readFileSync(file, 'utf8'),
      ),
  );
