// `npm run bench`: every benchmark side by side with its baseline, in one run; writes
// BENCHMARKS.md with the figures, the command and the machine. `--quick` for a smoke run
// (figures not written unless `--write` is given as well).
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { benchDaemon } from './daemon.js';
import { benchJournal } from './journal.js';
import { benchScheduler } from './scheduler.js';

const quick = process.argv.includes('--quick');
const write = !quick || process.argv.includes('--write');

const sections = [];
const started = Date.now();
console.error('scheduler: Sluice vs p-limit vs p-queue …');
sections.push(['Model scheduler overhead', (await benchScheduler({ quick })).markdown]);
console.error('journal: SQLite vs in-memory …');
sections.push(['Recorded calls with the SQLite journal', (await benchJournal({ quick })).markdown]);
console.error('daemon: sluice serve vs bare node:http …');
sections.push(['The daemon over HTTP', (await benchDaemon({ quick })).markdown]);

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
