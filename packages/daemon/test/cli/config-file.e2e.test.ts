import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { api } from '../helpers/http-client.js';
import { logLines } from '../helpers/log-lines.js';
import { runSluice, startSluice } from '../helpers/sluice-process.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `text` to a TOML file of its own and returns its path. */
function configFile(name: string, text: string): string {
  const path = join(dir, `${name}.toml`);
  writeFileSync(path, text);
  return path;
}

/** The one line a refused start wrote: JSON, at error level. */
async function refusal(path: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const result = await runSluice(['serve', '--port', '0', '--data-dir', join(dir, 'data')], {
    SLUICE_CONFIG: path,
    ...env,
  });
  expect(result.code).toBe(1);
  expect(result.stdout).toBe('');
  const lines = logLines(result.stderr);
  expect(lines).toHaveLength(1);
  expect(lines[0]!['level']).toBe(50);
  return lines[0]!['msg'] as string;
}

describe('sluice serve --config', () => {
  test('the file sets flags by their names; a flag on the command line wins over the file', async () => {
    const path = configFile(
      'precedence',
      [
        '# flags without their leading "--"',
        'port = 1 # the command line says --port 0, which wins',
        'max-sessions = 50',
        'max-sessions-per-workspace = 7',
        'model-max-concurrency = 3',
        'allow-origin = ["https://app.example.com"]',
      ].join('\n'),
    );
    const sluice = await startSluice(['--config', path, '--max-sessions', '60']);
    try {
      const caps = await api(sluice.url, 'GET', '/capabilities');
      expect(caps.body.limits).toMatchObject({
        maxSessions: 60,
        maxSessionsPerWorkspace: 7,
        model: { maxConcurrency: 3 },
      });
      const allowed = await api(sluice.url, 'GET', '/health', {
        headers: { origin: 'https://app.example.com' },
      });
      expect(allowed.status).toBe(200);
    } finally {
      expect(await sluice.stop()).toBe(0);
    }
  });

  test('an unknown key is refused at start-up, naming the file and the key', async () => {
    const path = configFile('unknown', 'max-sesions = 3\n');
    expect(await refusal(path)).toBe(
      `${path}: max-sesions: unknown key; the keys are the flags of \`sluice serve --help\` without their leading "--"`,
    );
  });

  test.each([
    ['event-ring-size = 0', 'event-ring-size: must be an integer in [1, 1000000] (got 0)'],
    ['provider = "magic"', 'provider: Allowed choices are echo, openai, anthropic. (got "magic")'],
    ['require-auth = "yes"', 'require-auth: must be true or false (got "yes")'],
    ['model = ["a", "b"]', 'model: must be a single value, not a list (got ["a","b"])'],
    [
      '[[agent]]\nname = "one"\ncommand = ["one-agent", "--acp"]\n[[agent]]\nname = "two"\ncommand = []',
      'agent[1].command: must be a non-empty array of non-empty strings (got [])',
    ],
    [
      'model-max-concurrency = 8\nmodel-max-inflight = 4',
      'model-max-inflight: modelMaxInflight must be at least',
    ],
  ])('%j is refused naming its path in the file', async (toml, message) => {
    const path = configFile(`bad-${toml.length}`, `${toml}\n`);
    expect(await refusal(path)).toContain(`${path}: ${message}`);
  });

  test('a file that is not TOML is refused with where it breaks', async () => {
    const path = configFile('broken', 'max-sessions = 4\nport = = 4\n');
    expect(await refusal(path)).toBe(`${path}: line 2, column 8: not valid TOML: invalid value`);
  });
});
