import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The repository's requirement citations and the documents that define them: `docs/spec.md`
 * defines each `BP-n` and `SCH-n` under a heading `### <id> …` followed by a line
 * `Tested in: \`path\`, …`; `docs/protocol.md` defines each section `§n` under a heading
 * `## n. …`. Code, tests and docs cite them as `SPEC BP-n`, `SCH-n`, `PROTOCOL §n` or `§n`.
 */

/** The documents that define what may be cited. */
export const SPEC_PATH = 'docs/spec.md';
export const PROTOCOL_PATH = 'docs/protocol.md';

/** A file of the repository and its text; `path` is relative to the root, with `/`. */
export interface SourceFile {
  readonly path: string;
  readonly text: string;
}

/** What the two documents define. */
export interface Definitions {
  /** Requirement ids (`BP-1`, `SCH-14`, …), each with the test files it lists. */
  readonly requirements: ReadonlyMap<string, readonly string[]>;
  /** Protocol section numbers. */
  readonly sections: ReadonlySet<number>;
}

const REQUIREMENT = /\b(?:BP|SCH)-\d+\b/g;
const SECTION = /§\s?(\d+)/g;
const REQUIREMENT_HEADING = /^### ((?:BP|SCH)-\d+)\b/;
const TESTED_IN = /^Tested in: (.*)$/;
const SECTION_HEADING = /^## (\d+)\. /;
/** Folders never scanned: dependencies, build output, tool state. */
const SKIPPED = new Set(['node_modules', 'dist', 'coverage']);
const SCANNED = /\.(ts|js|mjs|cjs|md|sh)$/;
/** Where the tests live, whose citations the "Tested in" lists must match. */
const TEST_FILE = /^(packages\/[^/]+\/test\/.*|scripts\/[^/]+)\.test\.ts$/;

/** Reads the ids of `spec` (the text of docs/spec.md) and the sections of `protocol`. */
export function definitions(spec: string, protocol: string): Definitions {
  const requirements = new Map<string, string[]>();
  let current: string | undefined;
  for (const line of spec.split('\n')) {
    const heading = REQUIREMENT_HEADING.exec(line);
    if (heading !== null) {
      current = heading[1]!;
      requirements.set(current, []);
    }
    const tested = TESTED_IN.exec(line);
    if (tested !== null && current !== undefined)
      requirements.set(
        current,
        [...tested[1]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!),
      );
  }
  const sections = new Set<number>();
  for (const line of protocol.split('\n')) {
    const heading = SECTION_HEADING.exec(line);
    if (heading !== null) sections.add(Number(heading[1]));
  }
  return { requirements, sections };
}

/** One citation: `BP-3`, `SCH-14` or `§6`, and the 1-based line it is on. */
export interface Citation {
  readonly id: string;
  readonly line: number;
}

/** Every citation in `text`. */
export function citationsIn(text: string): Citation[] {
  return text
    .split('\n')
    .flatMap((content, index) => [
      ...[...content.matchAll(REQUIREMENT)].map((match) => ({ id: match[0], line: index + 1 })),
      ...[...content.matchAll(SECTION)].map((match) => ({ id: `§${match[1]!}`, line: index + 1 })),
    ]);
}

function isDefined(id: string, defined: Definitions): boolean {
  return id.startsWith('§') ? defined.sections.has(Number(id.slice(1))) : defined.requirements.has(id);
}

/** `file:line` and the id of each citation in `files` that `defined` does not define. */
export function undefinedCitations(files: readonly SourceFile[], defined: Definitions): string[] {
  return files.flatMap((file) =>
    citationsIn(file.text)
      .filter((citation) => !isDefined(citation.id, defined))
      .map(({ id, line }) => {
        const where = id.startsWith('§')
          ? `${PROTOCOL_PATH} has no section ${id}`
          : `${SPEC_PATH} has no ${id}`;
        return `${file.path}:${line} cites ${id}, but ${where}`;
      }),
  );
}

/**
 * Differences between each requirement's "Tested in" list and the test files among `files` that
 * cite the id: a file listed that does not cite it, or one that cites it and is not listed.
 */
export function testedInDifferences(files: readonly SourceFile[], defined: Definitions): string[] {
  const citing = new Map<string, Set<string>>();
  for (const file of files.filter((candidate) => TEST_FILE.test(candidate.path)))
    for (const { id } of citationsIn(file.text)) {
      if (!citing.has(id)) citing.set(id, new Set());
      citing.get(id)!.add(file.path);
    }
  return [...defined.requirements].flatMap(([id, listed]) => {
    const actual = citing.get(id) ?? new Set<string>();
    return [
      ...listed
        .filter((path) => !actual.has(path))
        .map((path) => `${SPEC_PATH} ${id} lists ${path}, which does not cite it`),
      ...[...actual]
        .filter((path) => !listed.includes(path))
        .map((path) => `${SPEC_PATH} ${id}: add ${path} to "Tested in"`),
    ];
  });
}

/** The text files of the repository at `root` that may cite a requirement, sorted by path. */
export function repositoryFiles(root: string): SourceFile[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      if (entry.name.startsWith('.') || SKIPPED.has(entry.name)) return [];
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return walk(path);
      return SCANNED.test(entry.name) ? [path] : [];
    });
  return walk(root)
    .map((path) => ({ path: relative(root, path).split('\\').join('/'), text: readFileSync(path, 'utf8') }))
    .sort((a, b) => a.path.localeCompare(b.path));
}
