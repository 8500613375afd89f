// BENCHMARKS.md as a list of sections, each written by one producer of `bench/run.js` with its
// own date, duration, machine load and command, so that `--only=` rewrites its sections in place
// and keeps the others as their own runs left them. Nothing in the file is written by hand.
import { loadavg } from 'node:os';

/** The marker line that opens a section's body and names its producer. */
const MARKER = /^<!-- bench:([a-z0-9-]+) -->$/m;

/**
 * Runs `produce()` and returns the section's Markdown: its title, the producer's marker, one line
 * saying when, how long, under what load and with which command it was measured, then the body.
 */
export async function measureSection({ id, title }, produce) {
  const started = new Date();
  const loadBefore = loadavg()[0];
  const markdown = await produce();
  const seconds = Math.round((Date.now() - started.getTime()) / 1000);
  const load = `load average ${loadBefore.toFixed(1)} → ${loadavg()[0].toFixed(1)}`;
  return [
    `## ${title}`,
    '',
    `<!-- bench:${id} -->`,
    `_Run ${started.toISOString().slice(0, 16)}Z, ${seconds} s, ${load}; \`npm run bench -- --only=${id}\`._`,
    '',
    markdown.trim(),
    '',
  ].join('\n');
}

/** The sections of a BENCHMARKS.md text by producer id; a section without a marker is `null`'s. */
export function parseSections(text) {
  const sections = new Map();
  const unowned = [];
  for (const block of text.split(/^(?=## )/m).slice(1)) {
    const id = MARKER.exec(block)?.[1];
    if (id === undefined) unowned.push(block.split('\n', 1)[0]);
    else sections.set(id, block.trimEnd() + '\n');
  }
  return { sections, unowned };
}

/**
 * The whole file: the header, then one section per producer in `order`: the fresh one where
 * this run measured it, else the one `previous` holds. A producer with neither is left out.
 */
export function composeBenchmarks({ header, order, fresh, previous }) {
  const { sections } = parseSections(previous);
  const blocks = order
    .map((id) => fresh.get(id) ?? sections.get(id))
    .filter((block) => block !== undefined)
    .map((block) => block.trimEnd());
  return [header.trimEnd(), '', ...blocks.flatMap((block) => [block, ''])].join('\n');
}
