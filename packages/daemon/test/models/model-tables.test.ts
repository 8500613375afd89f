import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, describe, expect, test } from 'vitest';
import { applyConfigFile } from '../../src/cli/config-file.js';
import { buildProgram } from '../../src/cli/program.js';
import { DaemonConfigError, resolveDaemonConfig } from '../../src/config.js';
import { createDaemon } from '../../src/daemon.js';
import { modelSpecs } from '../../src/models/index.js';

// `[[model]]` tables (issue 29): validated at start, naming the table, the key and the value.

const dir = mkdtempSync(join(tmpdir(), 'sluice-models-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function refusal(models: unknown, rest: Record<string, unknown> = {}): string {
  try {
    resolveDaemonConfig({ models, ...rest } as never);
  } catch (error) {
    if (error instanceof DaemonConfigError && error.setting === 'models') return error.message;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(models)}`);
}

describe('a [[model]] table that breaks a rule is refused at start, naming it', () => {
  test('a key written in the file is refused: it comes from a variable or a file', () => {
    expect(refusal([{ name: 'gpt', provider: 'openai', model: 'gpt-4o', apiKey: 'sk-secret' }])).toMatch(
      /models\[0\] \("gpt"\)\.apiKey: a key is never written in the config/,
    );
    expect(
      refusal([{ name: 'gpt', provider: 'openai', model: 'gpt-4o', apiKey: 'sk-secret' }]),
    ).not.toContain('sk-secret');
  });

  test('a key variable that is unset, a key file that is missing, or both at once', () => {
    const table = { name: 'gpt', provider: 'openai', model: 'gpt-4o' };
    expect(refusal([{ ...table, apiKeyEnv: 'SLUICE_TEST_NO_SUCH_KEY' }])).toMatch(
      /models\[0\] \("gpt"\)\.apiKeyEnv: the variable SLUICE_TEST_NO_SUCH_KEY is unset or empty/,
    );
    expect(refusal([{ ...table, apiKeyFile: join(dir, 'absent') }])).toMatch(/apiKeyFile: cannot read/);
    expect(refusal([{ ...table, apiKeyEnv: 'A', apiKeyFile: 'b' }])).toMatch(
      /apiKeyEnv or apiKeyFile, not both/,
    );
  });

  test('bad limits, unknown keys and providers, missing upstream model', () => {
    expect(refusal([{ name: 'a', maxConcurrency: 0 }])).toMatch(
      /models\[0\] \("a"\)\.maxConcurrency: must be positive \(got 0\)/,
    );
    expect(refusal([{ name: 'a', maxConcurrency: 8, maxInflight: 4 }])).toMatch(
      /maxInflight: must be at least maxConcurrency/,
    );
    expect(refusal([{ name: 'a', timeoutMs: 'soon' }])).toMatch(
      /\.timeoutMs: must be a positive integer \(got "soon"\)/,
    );
    expect(refusal([{ name: 'a', maxConcurency: 2 }])).toMatch(/\.maxConcurency: unknown key/);
    expect(refusal([{ name: 'a', provider: 'claude' }])).toMatch(/\.provider: must be one of/);
    expect(refusal([{ name: 'a', provider: 'openai' }])).toMatch(/models\[0\] \("a"\): model is required/);
    expect(refusal([{ name: 'has space' }])).toMatch(/models\[0\]\.name: must be a model name/);
  });

  test('names and aliases are unique; fallbacks name other models of the catalogue', () => {
    expect(refusal([{ name: 'a' }, { name: 'b', aliases: ['a'] }])).toMatch(/the name "a" is already a's/);
    expect(refusal([{ name: 'a', fallbacks: ['z'] }])).toMatch(/fallbacks: names "z", which is no model/);
    expect(refusal([{ name: 'a', fallbacks: ['a'] }])).toMatch(/fallbacks: names the model itself/);
  });

  test('the flag form beside tables is refused', () => {
    expect(refusal([{ name: 'a' }], { model: 'gpt-4o' })).toMatch(/remove model/);
  });
});

test('a key file is read and trimmed; unset limits take the --model-* flags, then the defaults', () => {
  const keyFile = join(dir, 'key');
  writeFileSync(keyFile, 'sk-from-file\n');
  const [spec, other] = modelSpecs(
    resolveDaemonConfig({
      modelMaxConcurrency: 3,
      models: [
        { name: 'gpt', provider: 'openai', model: 'gpt-4o', apiKeyFile: keyFile, maxQueued: 7 },
        { name: 'echo' },
      ],
    } as never),
  );
  expect(spec!.providerConfig).toMatchObject({ model: 'gpt-4o', apiKey: 'sk-from-file' });
  expect(spec!.limits).toMatchObject({ maxConcurrency: 3, maxQueued: 7, maxInflight: 64 });
  expect(other!.provider).toBe('echo');
});

test('without tables the single-model flags are a one-model catalogue named by the provider; echo stays the default', async () => {
  const daemon = createDaemon({ dataDir: join(dir, 'data'), workspace: dir, echoDelayMs: 0 });
  try {
    expect(daemon.models.names()).toEqual(['echo-1']);
    expect(daemon.models.get('default')).toBe(daemon.models.get('echo-1'));
    expect(daemon.runtime).toBe(daemon.models.defaultModel.runtime);
  } finally {
    await daemon.close();
  }
});

test('each model of a catalogue gets its own scheduler with its own limits', async () => {
  const daemon = createDaemon({
    dataDir: join(dir, 'data2'),
    workspace: dir,
    models: [
      { name: 'small', maxConcurrency: 1, maxQueued: 0 },
      { name: 'big', maxConcurrency: 6, maxQueued: 50, timeoutMs: 5_000 },
    ],
  } as never);
  try {
    const [small, big] = daemon.models.models;
    expect(small!.runtime.limits).toMatchObject({ maxConcurrency: 1, maxQueued: 0 });
    expect(big!.runtime.limits).toMatchObject({ maxConcurrency: 6, maxQueued: 50, defaultTimeoutMs: 5_000 });
    expect(small!.runtime.journal).toBe(big!.runtime.journal);
  } finally {
    await daemon.close();
  }
});

test('[[model]] tables in the config file are the catalogue; model = "…" stays the --model flag', async () => {
  const serve = buildProgram().commands.find((candidate) => candidate.name() === 'serve')! as Command;
  serve.parseOptions([]);
  const path = join(dir, 'sluice.toml');
  writeFileSync(
    path,
    [
      '[[model]]',
      'name = "fast"',
      'provider = "echo"',
      'maxConcurrency = 2',
      'fallbacks = ["spare"]',
      '[[model]]',
      'name = "spare"',
      'aliases = ["default"]',
      '',
    ].join('\n'),
  );
  const applied = await applyConfigFile(serve, path);
  expect(serve.opts()['models']).toEqual([
    { name: 'fast', provider: 'echo', maxConcurrency: 2, fallbacks: ['spare'] },
    { name: 'spare', aliases: ['default'] },
  ]);
  expect(applied.keys).toEqual(['models']);

  const flag = buildProgram().commands.find((candidate) => candidate.name() === 'serve')! as Command;
  flag.parseOptions([]);
  await applyConfigFile(flag, (writeFileSync(path, 'provider = "openai"\nmodel = "gpt-4o"\n'), path));
  expect(flag.opts()['model']).toBe('gpt-4o');
});
