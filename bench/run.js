// `npm run bench`: every benchmark side by side with its baseline, in one run; writes
// BENCHMARKS.md with the figures, the command and the machine. `--quick` for a smoke run
// (figures not written unless `--write` is given as well).
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { benchDaemon } from './daemon.js';
import { benchFleet } from './fleet.js';
import { benchGateway } from './gateway.js';
import { benchJournal } from './journal.js';
import { benchJournalSize } from './journal-size.js';
import { benchPgJournal } from './pgjournal.js';
import { benchScheduler } from './scheduler.js';

const quick = process.argv.includes('--quick');
// `--only=scheduler,journal,size,pgjournal,daemon,gateway,fleet` (or a daemon part: `503`, `prompts`, `memory`, `startup`)
// runs a subset for a quick check; a subset never overwrites BENCHMARKS.md.
const only = process.argv
  .find((arg) => arg.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
const runs = (name) => only === undefined || only.includes(name);
const write = only === undefined && (!quick || process.argv.includes('--write'));

const sections = [];
const started = Date.now();
if (runs('scheduler')) {
  console.error('scheduler: Sluice vs p-limit vs p-queue …');
  sections.push(['Model scheduler overhead', (await benchScheduler({ quick })).markdown]);
}
if (runs('journal')) {
  console.error('journal: SQLite vs in-memory …');
  sections.push(['Recorded calls with the SQLite journal', (await benchJournal({ quick })).markdown]);
}
if (runs('size')) {
  console.error('size: journal.db bytes per recorded call …');
  sections.push(['Journal size per recorded call', (await benchJournalSize({ quick })).markdown]);
}
if (runs('pgjournal')) {
  console.error('pgjournal: PostgreSQL journal vs SQLite journal …');
  sections.push([
    'Recorded calls with the PostgreSQL journal (--store)',
    (await benchPgJournal({ quick })).markdown,
  ]);
}
const daemonParts = ['503', 'prompts', 'memory', 'startup'].filter((part) => runs('daemon') || runs(part));
if (daemonParts.length > 0) {
  console.error('daemon: sluice serve vs bare node:http …');
  sections.push(['The daemon over HTTP', (await benchDaemon({ quick, parts: daemonParts })).markdown]);
}

if (runs('gateway')) {
  console.error('gateway: /v1/chat/completions vs the upstream directly …');
  sections.push(['The model gateway', (await benchGateway({ quick })).markdown]);
}

if (runs('fleet')) {
  console.error('fleet: model limits shared through Redis vs in process …');
  sections.push(['Model limits shared by a fleet (Redis)', (await benchFleet({ quick })).markdown]);
}

const machine = `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const body = [
  '# Benchmarks',
  '',
  'Produced by `npm run bench` (which builds, then runs `node --expose-gc bench/run.js`). Every figure is measured',
  'side by side with its baseline in the same run; compare ratios, not absolute numbers, across machines.',
  '',
  `Machine: ${machine}. Run: ${new Date(started).toISOString()}, ${Math.round((Date.now() - started) / 1000)} s.`,
  '',
  ...sections.flatMap(([title, markdown]) => [`## ${title}`, '', markdown, '']),
].join('\n');

console.log(body);
if (write) writeFileSync(new URL('../BENCHMARKS.md', import.meta.url), body);
