import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import {
  PROTOCOL_PATH,
  SPEC_PATH,
  citationsIn,
  definitions,
  repositoryFiles,
  testedInDifferences,
  undefinedCitations,
} from './spec-citations.js';

// docs/spec.md and docs/protocol.md are the repository's own requirements: a citation of an id
// or a section they do not define points nowhere. This file cites none itself (the ids below are
// built at run time), so that it does not have to be listed in docs/spec.md.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const defined = definitions(
  readFileSync(join(ROOT, SPEC_PATH), 'utf8'),
  readFileSync(join(ROOT, PROTOCOL_PATH), 'utf8'),
);
const id = (family: string, n: number): string => `${family}-${n}`;
const section = (n: number): string => `\u00a7${n}`;

test('the docs define every requirement of the seeds (14 BP, 19 SCH) and the protocol sections 1 to 10', () => {
  const expected = [
    ...Array.from({ length: 14 }, (_, i) => id('BP', i + 1)),
    ...Array.from({ length: 19 }, (_, i) => id('SCH', i + 1)),
  ];
  expect([...defined.requirements.keys()].sort()).toEqual(expected.sort());
  expect([...defined.sections].sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
});

test('every requirement id and protocol section cited in code, tests and docs is defined', () => {
  const files = repositoryFiles(ROOT);
  expect(files.length).toBeGreaterThan(100);
  expect(undefinedCitations(files, defined)).toEqual([]);
});

test('each requirement lists exactly the test files that cite it', () => {
  expect(testedInDifferences(repositoryFiles(ROOT), defined)).toEqual([]);
});

test('a made-up requirement id or protocol section is reported with its file and line', () => {
  const made = [id('BP', 99), id('SCH', 40), section(42)];
  const fixture = {
    path: 'packages/daemon/src/made-up.ts',
    text: `// ${id('BP', 6)} holds\n// SPEC ${made[0]} and ${made[1]}\n// PROTOCOL ${section(5)}, ${made[2]}\n`,
  };
  expect(citationsIn(fixture.text).map((citation) => citation.id)).toEqual([
    id('BP', 6),
    made[0],
    made[1],
    section(5),
    made[2],
  ]);
  expect(undefinedCitations([fixture], defined)).toEqual([
    `packages/daemon/src/made-up.ts:2 cites ${made[0]}, but docs/spec.md has no ${made[0]}`,
    `packages/daemon/src/made-up.ts:2 cites ${made[1]}, but docs/spec.md has no ${made[1]}`,
    `packages/daemon/src/made-up.ts:3 cites ${made[2]}, but docs/protocol.md has no section ${made[2]}`,
  ]);
});

test('a "Tested in" list that misses a citing test, or names one that does not cite, is reported', () => {
  const spec = `### ${id('BP', 1)} limit\n\nTested in: \`packages/sdk/test/a.test.ts\`\n`;
  const fixture = definitions(spec, '## 1. Conventions\n');
  const files = [
    { path: 'packages/sdk/test/a.test.ts', text: 'no citation here' },
    { path: 'packages/daemon/test/b.test.ts', text: `test('${id('BP', 1)} refuses the sixth prompt')` },
    { path: 'packages/daemon/src/c.ts', text: `// ${id('BP', 1)}: source files need not be listed` },
  ];
  expect(testedInDifferences(files, fixture)).toEqual([
    `docs/spec.md ${id('BP', 1)} lists packages/sdk/test/a.test.ts, which does not cite it`,
    `docs/spec.md ${id('BP', 1)}: add packages/daemon/test/b.test.ts to "Tested in"`,
  ]);
});
