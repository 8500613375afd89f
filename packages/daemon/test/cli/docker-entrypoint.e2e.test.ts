import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SLUICE_MAIN, startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

const ENTRYPOINT = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '../../../../deploy/docker-entrypoint.sh',
);

/** Runs the image's entrypoint script with the bundled CLI in place of the image's path. */
function entrypoint(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('sh', [ENTRYPOINT, ...args], {
    env: {
      ...process.env,
      SLUICE_TOKEN: undefined,
      QWEN_SERVER_TOKEN: undefined,
      SLUICE_BIN: SLUICE_MAIN,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolveRun) => child.once('close', (code) => resolveRun({ code, stdout, stderr })));
}

describe('deploy/docker-entrypoint.sh', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'sluice-entrypoint-'));
  const tokenFile = join(scratch, 'sluice_token');
  let daemon: SluiceProcess;
  beforeAll(async () => {
    writeFileSync(tokenFile, 'from-a-secret-file\n', { mode: 0o600 });
    daemon = await startSluice(['--require-auth', '--token', 'from-a-secret-file']);
  });
  afterAll(async () => {
    await daemon?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  test('SLUICE_TOKEN_FILE gives the command the token, as the image health check needs it', async () => {
    const result = await entrypoint(['status', '--url', daemon.url, '--json'], {
      SLUICE_TOKEN_FILE: tokenFile,
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ health: 'ok' });
  });

  test('without the token file the health check fails', async () => {
    const result = await entrypoint(['status', '--url', daemon.url], {});
    expect(result.code).toBe(1);
  });

  test('an unreadable SLUICE_TOKEN_FILE stops it naming the file', async () => {
    const missing = join(scratch, 'missing');
    const result = await entrypoint(['serve'], { SLUICE_TOKEN_FILE: missing });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`SLUICE_TOKEN_FILE "${missing}" is not a readable file`);
  });
});
