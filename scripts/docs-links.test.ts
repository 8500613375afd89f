import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { ROOT, anchors, documentationFiles, fencedBlocks, linkTargets, slug } from './markdown.js';

// Issue 30 item 3: the documentation is checked. Every relative link of the README, the changelog
// and docs/ names a file that exists and, with a #fragment, a heading of that file.

const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/** Every broken relative link of `file`, as `file:line → target (why)`. */
function brokenLinks(file: string): string[] {
  const text = read(file);
  const broken: string[] = [];
  for (const { target, line } of linkTargets(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: — not ours to check
    const [path = '', fragment] = target.split('#', 2);
    const resolved = path === '' ? join(ROOT, file) : join(ROOT, dirname(file), decodeURI(path));
    const where = `${file}:${line} → ${target}`;
    if (!existsSync(resolved)) {
      broken.push(`${where} (no ${relative(ROOT, resolved)})`);
      continue;
    }
    if (fragment === undefined) continue;
    if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
      broken.push(`${where} (an anchor into something that is not a Markdown file)`);
      continue;
    }
    if (!anchors(readFileSync(resolved, 'utf8')).has(fragment))
      broken.push(`${where} (no heading with anchor #${fragment})`);
  }
  return broken;
}

describe('the documentation', () => {
  test('every relative link of README.md, CHANGELOG.md and docs/ resolves, file and #anchor', () => {
    const files = documentationFiles();
    expect(files.length).toBeGreaterThan(40);
    expect(files.flatMap(brokenLinks)).toEqual([]);
  });

  test("anchors are GitHub's (repeats numbered), and a link inside code is not a link", () => {
    expect(anchors('# Top\n## A `code` heading (x)\n## A `code` heading (x)\n')).toEqual(
      new Set(['top', 'a-code-heading-x', 'a-code-heading-x-1']),
    );
    expect(slug('8. ACP over HTTP (/acp)')).toBe('8-acp-over-http-acp');
    expect(linkTargets('see [a](b.md#c) and `[not](code.md)`\n```\n[nor](fenced.md)\n```\n')).toEqual([
      { target: 'b.md#c', line: 1 },
    ]);
  });

  test('the README maps every page of docs/ and every generated reference', () => {
    const readme = read('README.md');
    const linked = new Set(linkTargets(readme).map(({ target }) => target.split('#')[0]));
    const pages = documentationFiles().filter((file) => /^docs\/[^/]+\.md$|^docs\/reference\//.test(file));
    expect(pages).toEqual(expect.arrayContaining(['docs/reference/metrics.md', 'docs/reference/errors.md']));
    expect(pages.filter((page) => !linked.has(page))).toEqual([]);
  });

  test('every sluice command in a fenced block of a page is in an sh block, which the doc-test runs', () => {
    const command = /(^|[\s;|&(])(npx )?sluice (serve|acp|status|journal|--version|--help)\b/m;
    const pages = documentationFiles().filter(
      (file) => file === 'README.md' || /^docs\/[^/]+\.md$/.test(file),
    );
    const outside = pages.flatMap((page) =>
      fencedBlocks(read(page), page)
        .filter((block) => block.lang !== 'sh' && command.test(block.text))
        .map((block) => `${page}:${block.line}`),
    );
    expect(outside).toEqual([]);
    const examples = pages.flatMap((page) =>
      fencedBlocks(read(page), page).filter(
        (block) => block.lang === 'sh' && /\bnpx sluice /.test(block.text),
      ),
    );
    expect(examples.filter((block) => block.mode.kind !== 'skip').length).toBeGreaterThanOrEqual(8);
  });

  test('the README fits on a screen: at most 150 lines, the two commands first', () => {
    const readme = read('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(150);
    const first = fencedBlocks(readme, 'README.md')[0]!;
    expect(first.text).toMatch(/^npm ci && npm start\b.*\nnpm ci && npm test\b/);
  });
});
