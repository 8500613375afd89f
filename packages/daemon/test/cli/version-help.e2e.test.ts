import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { runSluice, startSluice } from '../helpers/sluice-process.js';

const packages = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Every `.ts` file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** Names of the environment variables the packages' sources read (`env['X']`, `env.X`, `…Env('X')`). */
function variablesReadBySources(): Set<string> {
  const names = new Set<string>();
  const reads = [
    /\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]/g,
    /\benv\.([A-Z][A-Z0-9_]+)\b/g,
    /Env\(['"]([A-Z][A-Z0-9_]+)['"]\)/g,
  ];
  for (const pkg of readdirSync(packages)) {
    let files: string[];
    try {
      files = sources(join(packages, pkg, 'src'));
    } catch {
      continue;
    }
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const read of reads) for (const match of text.matchAll(read)) names.add(match[1]!);
    }
  }
  return names;
}

const { version } = JSON.parse(readFileSync(join(packages, 'daemon/package.json'), 'utf8')) as {
  version: string;
};

describe('sluice --version and --help', () => {
  test('--version prints the version of the installed package and exits 0', async () => {
    const result = await runSluice(['--version']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${version}\n`);
  });

  test("/capabilities and /openapi.json name the same version as --version, the package's", async () => {
    const sluice = await startSluice();
    try {
      const capabilities = (await (await fetch(`${sluice.url}/capabilities`)).json()) as { version: string };
      const openapi = (await (await fetch(`${sluice.url}/openapi.json`)).json()) as {
        info: { version: string };
      };
      expect(capabilities.version).toBe(version);
      expect(openapi.info.version).toBe(version);
    } finally {
      await sluice.stop();
    }
  });

  test('--help of sluice, serve and acp names every environment variable the sources read', async () => {
    const variables = variablesReadBySources();
    // The scan must find the variables it is meant to: a broken pattern would pass vacuously.
    expect([...variables]).toEqual(
      expect.arrayContaining(['SLUICE_TOKEN', 'SLUICE_LOG_LEVEL', 'OPENAI_API_KEY']),
    );
    for (const command of [[], ['serve'], ['acp']]) {
      const { code, stdout } = await runSluice([...command, '--help']);
      expect(code).toBe(0);
      const section = stdout.slice(stdout.indexOf('Environment variables:'));
      expect(section.length, `sluice ${command.join(' ')} --help`).toBeGreaterThan(30);
      for (const name of variables)
        expect(section, `${name} in sluice ${command.join(' ')} --help`).toContain(name);
    }
  });
});
