import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, expect, test } from 'vitest';
import { applyConfigFile, ConfigFileError } from '../../src/cli/config-file.js';
import { SERVE_ONLY_KEYS } from '../../src/cli/config-options.js';
import { buildProgram } from '../../src/cli/program.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-config-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The `serve` or `acp` command with `args` parsed as its flags, as commander does before the action. */
function command(name: 'serve' | 'acp', args: string[] = []): Command {
  const found = buildProgram().commands.find((candidate) => candidate.name() === name)!;
  found.parseOptions(args);
  return found;
}

function file(text: string): string {
  const path = join(dir, `${Math.random().toString(36).slice(2)}.toml`);
  writeFileSync(path, text);
  return path;
}

test("agents are [[agent]] tables or the flag's strings, in the order written", async () => {
  const serve = command('serve');
  const path = file(['agent = ["qwen --acp"]'].join('\n') + '\n');
  await applyConfigFile(serve, path);
  expect(serve.opts()['agent']).toEqual(['qwen --acp']);

  const tables = command('serve');
  await applyConfigFile(
    tables,
    file(
      '[[agent]]\nname = "qwen"\ncommand = ["qwen", "--acp"]\n[[agent]]\nname = "other"\ncommand = ["other"]\n',
    ),
  );
  expect(tables.opts()['agent']).toEqual([
    { name: 'qwen', command: ['qwen', '--acp'] },
    { name: 'other', command: ['other'] },
  ]);
});

test('a value from the file is parsed as the flag would be, and says where it came from', async () => {
  const serve = command('serve', ['--max-sessions', '9']);
  const applied = await applyConfigFile(serve, file('max-sessions = 3\nmax-sessions-per-workspace = "4"\n'));
  expect(serve.opts()['maxSessions']).toBe(9);
  expect(serve.opts()['maxSessionsPerWorkspace']).toBe(4);
  expect(serve.getOptionValueSource('maxSessionsPerWorkspace')).toBe('config');
  expect(applied.keys).toEqual(['max-sessions-per-workspace']);
});

test('sluice acp skips the HTTP server keys of a file written for serve, and refuses other unknown keys', async () => {
  const acp = command('acp');
  const path = file('port = 4170\nhostname = "0.0.0.0"\nmax-sessions = 5\n');
  await applyConfigFile(acp, path, SERVE_ONLY_KEYS);
  expect(acp.opts()['maxSessions']).toBe(5);
  await expect(applyConfigFile(command('acp'), path)).rejects.toThrow(`${path}: port: unknown key`);
});

test('an agent table with another key, or a file that cannot be read, is refused naming it', async () => {
  const path = file('[[agent]]\nname = "a"\ncommand = ["a"]\nshell = true\n');
  await expect(applyConfigFile(command('serve'), path)).rejects.toThrow(
    `${path}: agent[0].shell: unknown key; an agent has name and command (got true)`,
  );
  const missing = join(dir, 'missing.toml');
  await expect(applyConfigFile(command('serve'), missing)).rejects.toThrow(ConfigFileError);
  await expect(applyConfigFile(command('serve'), missing)).rejects.toThrow(`${missing}: cannot read`);
});
