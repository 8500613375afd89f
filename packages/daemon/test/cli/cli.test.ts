import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test, vi } from 'vitest';
import { api } from '../helpers/http-client.js';
import { runSluice, startSluice } from '../helpers/sluice-process.js';

describe('sluice serve flags', () => {
  test.concurrent.each([
    [['--port', 'abc'], '--port'],
    [['--port', '70000'], '--port'],
    [['--max-pending-prompts-per-session', '-1'], '--max-pending-prompts-per-session'],
    [['--max-pending-prompts-per-session', '1.5'], '--max-pending-prompts-per-session'],
    [['--prompt-deadline-ms', '0'], '--prompt-deadline-ms'],
    [['--provider', 'magic'], '--provider'],
    [['--model-max-concurrency', '0'], '--model-max-concurrency'],
    [['--model-max-concurrency', '8', '--model-max-inflight', '4'], '--model-max-inflight'],
    [['--provider', 'openai'], '--model'],
    [['--event-ring-size', '0'], '--event-ring-size'],
    [['--max-sessions-per-workspace', '0'], '--max-sessions-per-workspace'],
    [['--provider', 'openai', '--model', 'm', '--base-url', 'ftp://example.com/v1'], '--base-url'],
    [['--allow-origin', 'not a url'], '--allow-origin'],
    [['--permission-response-timeout-ms', '-5'], '--permission-response-timeout-ms'],
    [['--permission-response-timeout-ms', '1.5'], '--permission-response-timeout-ms'],
  ])('%j exits 1 naming %s', async (args, flag) => {
    const result = await runSluice(['serve', '--port', '0', ...args]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(flag);
    expect(result.stdout).toBe('');
  });

  test('an empty token refuses to start', async () => {
    const flag = await runSluice(['serve', '--port', '0', '--token', '']);
    expect(flag.code).toBe(1);
    expect(flag.stderr).toContain('--token');
    const env = await runSluice(['serve', '--port', '0'], { SLUICE_TOKEN: '' });
    expect(env.code).toBe(1);
    expect(env.stderr).toContain('SLUICE_TOKEN');
  });

  test('a --data-dir that cannot hold the journal refuses to start with a message naming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-bad-data-'));
    try {
      writeFileSync(join(dir, 'file'), 'x');
      mkdirSync(join(dir, 'garbage'));
      writeFileSync(join(dir, 'garbage', 'journal.db'), 'this is not a SQLite database at all');
      for (const [dataDir, reason] of [
        [join(dir, 'file', 'data'), 'cannot create directory'],
        [join(dir, 'garbage'), 'is not a SQLite database'],
      ] as const) {
        const result = await runSluice(['serve', '--port', '0', '--data-dir', dataDir]);
        expect(result.code, dataDir).toBe(1);
        expect(result.stderr).toMatch(new RegExp(`^error: --data-dir: .*${reason}`));
        expect(result.stdout).toBe('');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('prints exactly one listening line on stdout; --port 0 picks a free port', async () => {
    const sluice = await startSluice();
    try {
      expect(sluice.port).toBeGreaterThan(0);
      expect(sluice.stdout()).toBe(`sluice listening on http://127.0.0.1:${sluice.port}\n`);
      const health = await api(sluice.url, 'GET', '/health');
      expect(health.status).toBe(200);
    } finally {
      expect(await sluice.stop('SIGINT')).toBe(0);
    }
  });

  test('at SLUICE_LOG_LEVEL=info stderr carries the JSON line saying where it listens', async () => {
    const sluice = await startSluice([], { SLUICE_LOG_LEVEL: 'info' });
    try {
      // stderr is its own pipe: the line may arrive after the listening line on stdout.
      await vi.waitFor(() => expect(sluice.stderr()).toContain('Server listening at'));
      const lines = sluice
        .stderr()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines).toContainEqual({
        level: 30,
        time: expect.any(Number),
        name: 'sluice',
        msg: `Server listening at http://127.0.0.1:${sluice.port}`,
      });
    } finally {
      await sluice.stop();
    }
  });

  test('BP-2 --max-pending-prompts-per-session 0 disables the limit; model flags reach limits.model', async () => {
    const sluice = await startSluice([
      '--max-pending-prompts-per-session',
      '0',
      '--prompt-deadline-ms',
      '60000',
      '--model-max-concurrency',
      '2',
      '--model-max-queued',
      '0',
      '--model-max-inflight',
      '3',
      '--model-max-request-bytes',
      '1000',
      '--model-timeout-ms',
      '5000',
    ]);
    try {
      const caps = await api(sluice.url, 'GET', '/capabilities');
      expect(caps.body.limits.maxPendingPromptsPerSession).toBeNull();
      expect(caps.body.features).toContain('prompt_absolute_deadline');
      expect(caps.body.limits.model).toEqual({
        maxConcurrency: 2,
        maxQueued: 0,
        maxInflight: 3,
        maxRequestBytes: 1000,
        defaultTimeoutMs: 5000,
      });
    } finally {
      expect(await sluice.stop('SIGTERM')).toBe(0);
    }
  });

  test('--max-sessions-per-workspace reaches limits; --provider openai loads its provider on demand', async () => {
    const sluice = await startSluice([
      '--max-sessions-per-workspace',
      '7',
      '--provider',
      'openai',
      '--model',
      'm-1',
      '--base-url',
      'http://127.0.0.1:9/v1',
    ]);
    try {
      const caps = await api(sluice.url, 'GET', '/capabilities');
      expect(caps.body.limits.maxSessionsPerWorkspace).toBe(7);
      expect(caps.body.runtime).toEqual({ provider: 'openai', model: 'm-1' });
    } finally {
      expect(await sluice.stop('SIGTERM')).toBe(0);
    }
  });

  test('a non-loopback bind without a token generates one and prints it', async () => {
    const sluice = await startSluice(['--hostname', '0.0.0.0']);
    try {
      const match = /generated bearer token: (\S+)/.exec(sluice.stderr());
      expect(match).not.toBeNull();
      const local = `http://127.0.0.1:${sluice.port}`;
      expect((await api(local, 'GET', '/capabilities')).status).toBe(401);
      expect((await api(local, 'GET', '/health')).status).toBe(401);
      const ok = await api(local, 'GET', '/capabilities', {
        headers: { authorization: `Bearer ${match![1]}` },
      });
      expect(ok.status).toBe(200);
    } finally {
      await sluice.stop();
    }
  });
});
