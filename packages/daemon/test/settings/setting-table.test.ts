import { expect, test } from 'vitest';
import { resolveDaemonConfig } from '../../src/config.js';
import { buildProgram } from '../../src/cli/program.js';
import { FLAG_OF } from '../../src/cli/flag-config.js';
import { SERVE_ONLY_KEYS } from '../../src/cli/config-options.js';
import { PROVIDER_NAMES } from '../../src/providers/index.js';
import { environmentName, flagName } from '../../src/kinds/index.js';
import { SETTING_ENTRIES } from '../../src/settings/index.js';

function command(name: 'serve' | 'acp') {
  return buildProgram().commands.find((candidate) => candidate.name() === name)!;
}

test("each flag's entry key is the option commander parses it into, and its variable is SLUICE_<FLAG>", () => {
  const serve = command('serve');
  for (const [key, setting] of SETTING_ENTRIES) {
    if (setting.flag === undefined) continue;
    const option = serve.options.find((candidate) => candidate.long === setting.flag!.split(' ')[0]);
    expect(option?.attributeName(), setting.flag).toBe(key);
    const name = flagName(setting)!;
    if (setting.ownEnv === undefined) {
      expect(option?.envVar).toBe(`SLUICE_${name.replace(/-/g, '_').toUpperCase()}`);
      expect(environmentName(setting)).toBe(option?.envVar);
    } else expect(setting.ownEnv[0]![0]).toBe(`SLUICE_${name.toUpperCase()}`);
  }
});

test('sluice acp has every flag but the HTTP server ones, which its config file may hold', () => {
  const acp = command('acp').options.map((option) => option.long!.replace(/^--/, ''));
  const serve = command('serve').options.map((option) => option.long!.replace(/^--/, ''));
  expect(SERVE_ONLY_KEYS).toEqual(expect.arrayContaining(['port', 'hostname', 'token', 'require-auth']));
  expect(serve.filter((flag) => !acp.includes(flag)).sort()).toEqual([...SERVE_ONLY_KEYS].sort());
});

test('--help lists the flags under their topics', () => {
  const help = command('serve').helpInformation();
  for (const heading of [
    'Server:',
    'Security:',
    'Sessions:',
    'Model scheduler:',
    'Model provider:',
    'Fleet:',
  ])
    expect(help).toContain(`\n${heading}\n`);
  expect(help.indexOf('--model-max-queued')).toBeGreaterThan(help.indexOf('Model scheduler:'));
  expect(help.indexOf('--model-max-queued')).toBeLessThan(help.indexOf('Model provider:'));
});

test('every daemon setting with a flag is named by it in errors, and is validated by the config', () => {
  for (const [key, setting] of SETTING_ENTRIES) {
    if (setting.scope !== 'daemon' || setting.flag === undefined) continue;
    const configKey = setting.config ?? key;
    expect(FLAG_OF[configKey], configKey).toBe(setting.flag.split(' ')[0]);
    expect(() => resolveDaemonConfig({ [configKey]: Symbol('bad') } as never), configKey).toThrow(
      new RegExp(`^${configKey}: .*\\(got `),
    );
  }
});

test('--provider takes the names of the provider registry, the first the default', () => {
  const provider = command('serve').options.find((option) => option.long === '--provider')!;
  expect(provider.argChoices).toEqual(PROVIDER_NAMES);
  expect(resolveDaemonConfig({}).provider).toBe(PROVIDER_NAMES[0]);
});
