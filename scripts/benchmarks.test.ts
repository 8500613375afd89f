import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
// @ts-expect-error -- plain JavaScript modules of the bench, without type declarations
import { PRODUCERS } from '../bench/run.js';
// @ts-expect-error -- as above
import { composeBenchmarks, parseSections } from '../bench/sections.js';

// Issue 28.13: BENCHMARKS.md is written by `npm run bench` alone. Every section names the
// producer that wrote it; a section pasted by hand has none, and a producer whose section is
// missing was never run.
const ids = (PRODUCERS as { id: string }[]).map((p) => p.id);
const text = readFileSync(new URL('../BENCHMARKS.md', import.meta.url), 'utf8');

test('every section of BENCHMARKS.md was written by a producer of npm run bench, and every producer wrote one', () => {
  const { sections, unowned } = parseSections(text) as { sections: Map<string, string>; unowned: string[] };
  expect(unowned, 'sections without a `<!-- bench:id -->` marker (written by hand?)').toEqual([]);
  expect(
    [...sections.keys()].filter((id) => !ids.includes(id)),
    'sections of no producer',
  ).toEqual([]);
  expect(
    ids.filter((id) => !sections.has(id)),
    'producers with no section',
  ).toEqual([]);
});

test('a run of some producers rewrites their sections in place and keeps the others', () => {
  const previous = composeBenchmarks({
    header: '# B',
    order: ['a', 'b', 'c'],
    fresh: new Map([
      ['a', '## A\n\n<!-- bench:a -->\nold a\n'],
      ['b', '## B\n\n<!-- bench:b -->\nold b\n'],
    ]),
    previous: '',
  }) as string;
  const next = composeBenchmarks({
    header: '# B',
    order: ['a', 'b', 'c'],
    fresh: new Map([
      ['c', '## C\n\n<!-- bench:c -->\nnew c\n'],
      ['a', '## A\n\n<!-- bench:a -->\nnew a\n'],
    ]),
    previous,
  }) as string;
  expect(next).toBe(
    '# B\n\n## A\n\n<!-- bench:a -->\nnew a\n\n## B\n\n<!-- bench:b -->\nold b\n\n## C\n\n<!-- bench:c -->\nnew c\n',
  );
});
