import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { runSluice, startSluice } from '../helpers/sluice-process.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `limits.maxSessions` of a daemon started with `args` and `env`. */
async function maxSessions(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const daemon = await startSluice(args, env);
  try {
    const response = await fetch(`${daemon.url}/capabilities`);
    return ((await response.json()) as { limits: { maxSessions: number } }).limits.maxSessions;
  } finally {
    await daemon.stop();
  }
}

describe('every flag is read from SLUICE_<FLAG> too', () => {
  test('the command line wins over the config file, which wins over the environment', async () => {
    const env = { SLUICE_MAX_SESSIONS: '7' };
    const file = join(dir, 'sessions.toml');
    writeFileSync(file, 'max-sessions = 5\n');
    expect(await maxSessions([], env)).toBe(7);
    expect(await maxSessions(['--config', file], env)).toBe(5);
    expect(await maxSessions(['--config', file, '--max-sessions', '3'], env)).toBe(3);
  });

  test('a bad value in a variable stops the start, naming the variable and the rule', async () => {
    const result = await runSluice(['serve', '--port', '0', '--data-dir', join(dir, 'data')], {
      SLUICE_MODEL_MAX_QUEUED: 'many',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('SLUICE_MODEL_MAX_QUEUED');
    expect(result.stderr).toContain('must be an integer >= 0');
  });

  test('a value the daemon refuses names the variable it came from', async () => {
    const result = await runSluice(['serve', '--port', '0', '--data-dir', join(dir, 'data')], {
      SLUICE_MODEL_MAX_INFLIGHT: '2',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'SLUICE_MODEL_MAX_INFLIGHT: modelMaxInflight must be at least modelMaxConcurrency (4), got 2',
    );
  });
});
