// What the documentation checks read of a Markdown file: its fenced blocks with their doc-test
// annotation, its headings' anchors, and its relative links. Used by scripts/docs-links.test.ts
// and packages/daemon/test/docs/shell-blocks.e2e.test.ts.
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** What the comment before a block asks of the doc-test. */
export type DocTestMode =
  { kind: 'run' } | { kind: 'skip'; why: string } | { kind: 'interrupt'; afterMs: number; why: string };

/** One fenced block: its info string (`sh`, `toml`, ''), its text and where it starts (1-based line). */
export interface FencedBlock {
  readonly lang: string;
  readonly text: string;
  readonly line: number;
  readonly mode: DocTestMode;
}

const FENCE = /^(\s*)(```+|~~~+)\s*([\w-]*)/;
const ANNOTATION = /^<!-- doc-test: (skip|interrupt after (\d+) s) \((.+)\) -->$/;

/** The annotation on `line`, or undefined when it is not one; a malformed one throws, naming it. */
function annotationOf(line: string, where: string): DocTestMode | undefined {
  if (!line.startsWith('<!-- doc-test')) return undefined;
  const match = ANNOTATION.exec(line.trim());
  if (match === null)
    throw new Error(
      `${where}: a doc-test annotation must read "<!-- doc-test: skip (why) -->" or "<!-- doc-test: interrupt after N s (why) -->", got ${line}`,
    );
  if (match[1] === 'skip') return { kind: 'skip', why: match[3]! };
  return { kind: 'interrupt', afterMs: Number(match[2]) * 1000, why: match[3]! };
}

/**
 * The fenced blocks of `text`, in order. An annotation applies to the next block when only blank
 * lines lie between them; one that precedes no block throws, as does an unclosed fence.
 */
export function fencedBlocks(text: string, file = 'markdown'): FencedBlock[] {
  const lines = text.split('\n');
  const blocks: FencedBlock[] = [];
  let pending: { mode: DocTestMode; line: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const mode = annotationOf(line, `${file}:${i + 1}`);
    if (mode !== undefined) {
      pending = { mode, line: i + 1 };
      continue;
    }
    const open = FENCE.exec(line);
    if (open === null) {
      if (line.trim() !== '' && pending !== undefined)
        throw new Error(`${file}:${pending.line}: the doc-test annotation is not followed by a fenced block`);
      continue;
    }
    const [, indent, fence] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !lines[j]!.trimStart().startsWith(fence!); j++) body.push(lines[j]!);
    if (j === lines.length) throw new Error(`${file}:${i + 1}: unclosed fence`);
    const text = body.map((bodyLine) =>
      bodyLine.startsWith(indent!) ? bodyLine.slice(indent!.length) : bodyLine,
    );
    blocks.push({
      lang: open[3]!,
      text: text.join('\n'),
      line: i + 1,
      mode: pending?.mode ?? { kind: 'run' },
    });
    pending = undefined;
    i = j;
  }
  if (pending !== undefined)
    throw new Error(`${file}:${pending.line}: the doc-test annotation is not followed by a fenced block`);
  return blocks;
}

/** `text` with its fenced blocks blanked out, line numbers kept. */
function outsideFences(text: string): string[] {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    if (fence !== undefined) {
      if (line.trimStart().startsWith(fence)) fence = undefined;
      return '';
    }
    const open = FENCE.exec(line);
    if (open === null) return line;
    fence = open[2];
    return '';
  });
}

/** `text` with its fenced blocks and inline code spans blanked out, line numbers kept. */
export function prose(text: string): string {
  return outsideFences(text)
    .map((line) => line.replace(/(`+)[^`]*?\1/g, ''))
    .join('\n');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of `text`'s headings, numbered as GitHub numbers repeats (`a`, `a-1`, …). */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of outsideFences(text)) {
    const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const base = slug(heading[1]!.replace(/`/g, ''));
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** The link targets of `text` outside code: `[text](target)` and `[text]: target` definitions. */
export function linkTargets(text: string): Array<{ target: string; line: number }> {
  const found: Array<{ target: string; line: number }> = [];
  prose(text)
    .split('\n')
    .forEach((line, index) => {
      for (const match of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g))
        found.push({ target: match[1]!, line: index + 1 });
      const definition = /^\s*\[[^\]]+\]:\s+(\S+)/.exec(line);
      if (definition !== null) found.push({ target: definition[1]!, line: index + 1 });
    });
  return found;
}

/** README.md, CHANGELOG.md and every Markdown file under docs/, as paths from the root. */
export function documentationFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory()
        ? walk(join(dir, entry.name))
        : entry.name.endsWith('.md')
          ? [join(dir, entry.name)]
          : [],
    );
  return ['README.md', 'CHANGELOG.md', ...walk('docs').sort()];
}
