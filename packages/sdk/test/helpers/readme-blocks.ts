import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SDK = join(dirname(fileURLToPath(import.meta.url)), '../..');

/** One ```ts block of packages/sdk/README.md and the heading it stands under. */
export interface ReadmeBlock {
  heading: string;
  source: string;
}

/** Every TypeScript block of the SDK's README, in order. */
export function readmeBlocks(): ReadmeBlock[] {
  const readme = readFileSync(join(SDK, 'README.md'), 'utf8');
  const blocks: ReadmeBlock[] = [];
  let heading = '';
  const pattern = /^(#{1,4}) (.+)$|^```ts\n([\s\S]*?)^```$/gm;
  for (let match = pattern.exec(readme); match !== null; match = pattern.exec(readme)) {
    if (match[2] !== undefined) heading = match[2];
    else blocks.push({ heading, source: match[3]! });
  }
  return blocks;
}

/** The block under `heading`; throws when the README has none (a renamed section). */
export function readmeBlock(heading: string): ReadmeBlock {
  const block = readmeBlocks().find((candidate) => candidate.heading === heading);
  if (block === undefined)
    throw new Error(`packages/sdk/README.md has no TypeScript block under "${heading}"`);
  return block;
}

/**
 * Writes `source` as a module next to the tests (so that `@sluice/sdk` resolves as it does for a
 * user of the workspace) and returns its path; `cleanUp` removes every file written.
 */
export class GeneratedModules {
  private readonly files: string[] = [];

  write(name: string, source: string): string {
    const file = join(SDK, 'test', `.readme-${name}.generated.ts`);
    writeFileSync(file, `${source}\nexport {};\n`);
    this.files.push(file);
    return file;
  }

  cleanUp(): void {
    for (const file of this.files.splice(0)) rmSync(file, { force: true });
  }
}
