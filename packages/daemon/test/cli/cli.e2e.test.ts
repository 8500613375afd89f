import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, test, vi } from 'vitest';
import { api } from '../helpers/http-client.js';
import { generatedToken, logLines } from '../helpers/log-lines.js';
import { runSluice, startSluice } from '../helpers/sluice-process.js';

// A plain file where a directory is expected: --data-dir and --workspace cannot use it.
const scratch = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
const aFile = join(scratch, 'not-a-dir');
writeFileSync(aFile, 'x');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

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
    [['--provider', 'anthropic'], '--model'],
    [['--provider', 'anthropic', '--model', 'm', '--anthropic-max-tokens', '0'], '--anthropic-max-tokens'],
    [['--event-ring-size', '0'], '--event-ring-size'],
    [['--max-sessions-per-workspace', '0'], '--max-sessions-per-workspace'],
    [['--provider', 'openai', '--model', 'm', '--base-url', 'ftp://example.com/v1'], '--base-url'],
    [['--allow-origin', 'not a url'], '--allow-origin'],
    [['--permission-response-timeout-ms', '-5'], '--permission-response-timeout-ms'],
    [['--permission-response-timeout-ms', '1.5'], '--permission-response-timeout-ms'],
    [['--port', '-1'], '--port'],
    [['--hostname', ''], '--hostname'],
    // TEST-NET: not an address of ours; the daemon is built before listening, so give it a data dir
    [['--hostname', '203.0.113.7', '--token', 't', '--data-dir', join(scratch, 'host')], '--hostname'],
    [['--token', '   '], '--token'],
    [['--workspace', ''], '--workspace'],
    [['--workspace', aFile], '--workspace'],
    [['--workspace', join(scratch, 'missing')], '--workspace'],
    [['--max-pending-prompts-per-session', 'Infinity'], '--max-pending-prompts-per-session'],
    [['--max-pending-prompts-per-session', 'NaN'], '--max-pending-prompts-per-session'],
    [['--prompt-deadline-ms', '2147483648'], '--prompt-deadline-ms'],
    [['--prompt-deadline-ms', '1.5'], '--prompt-deadline-ms'],
    [['--max-sessions', '0'], '--max-sessions'],
    [['--max-sessions', 'many'], '--max-sessions'],
    [['--event-ring-size', '1000001'], '--event-ring-size'],
    [['--model-max-queued', '-1'], '--model-max-queued'],
    [['--model-max-inflight', '0'], '--model-max-inflight'],
    [['--model-max-request-bytes', '0'], '--model-max-request-bytes'],
    [['--model-timeout-ms', '0'], '--model-timeout-ms'],
    [['--model', ''], '--model'],
    [['--provider', 'openai', '--model', 'm', '--base-url', 'not a url'], '--base-url'],
    [['--echo-delay-ms', '-1'], '--echo-delay-ms'],
    [['--echo-delay-ms', 'slow'], '--echo-delay-ms'],
    [['--data-dir', ''], '--data-dir'],
    [['--data-dir', aFile], '--data-dir'],
    [['--drain-timeout-ms', 'x'], '--drain-timeout-ms'],
    [['--allow-origin', 'https://app.example.com/path'], '--allow-origin'],
  ])('%j exits 1 naming %s', async (args, flag) => {
    const result = await runSluice(['serve', '--port', '0', ...args]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(flag);
    expect(result.stdout).toBe('');
  });

  test('a port that is taken exits 1 naming --port', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = blocker.address() as AddressInfo;
      const result = await runSluice(['serve', '--port', String(port), '--data-dir', join(scratch, 'port')]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('--port');
      expect(result.stderr).toContain('EADDRINUSE');
      expect(result.stdout).toBe('');
    } finally {
      blocker.close();
    }
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
        const [line] = logLines(result.stderr);
        expect(line?.['level']).toBe(50);
        expect(line?.['msg']).toMatch(new RegExp(`^--data-dir: .*${reason}`));
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

  test('a turn that fails at the provider is logged for the operator with its code, never its text', async () => {
    // Port 1 on loopback: nothing listens, the provider cannot connect.
    const sluice = await startSluice(
      ['--provider', 'openai', '--model', 'm', '--base-url', 'http://127.0.0.1:1/v1'],
      { OPENAI_API_KEY: 'k' },
    );
    try {
      const { sessionId } = (await api(sluice.url, 'POST', '/session', { body: {} })).body;
      const secret = 'the launch code is 0000';
      const res = await api(sluice.url, 'POST', `/session/${sessionId}/prompt`, {
        body: { prompt: [{ type: 'text', text: secret }] },
      });
      expect(res.status).toBe(202);
      await vi.waitFor(() => expect(sluice.stderr()).toContain('turn failed'), { timeout: 15_000 });
      const line = logLines(sluice.stderr()).find((l) => l['msg'] === 'turn failed');
      expect(line).toMatchObject({
        level: 40,
        sessionId,
        promptId: res.body.promptId,
        code: 'model_provider_error',
      });
      expect(sluice.stderr()).not.toContain('launch code');
    } finally {
      await sluice.stop();
    }
  });

  test('a session store that fails is logged for the operator as a daemon error', async () => {
    const sluice = await startSluice();
    // Another process holds the data file's write lock past the busy timeout when it is first used.
    const holder = new Database(join(sluice.dataDir, 'journal.db'));
    holder.exec('CREATE TABLE other_tool (x)');
    holder.exec('BEGIN EXCLUSIVE');
    try {
      expect((await api(sluice.url, 'POST', '/session', { body: {} })).status).toBe(200);
      await vi.waitFor(() => expect(sluice.stderr()).toContain('daemon error'), { timeout: 20_000 });
      const line = logLines(sluice.stderr()).find((l) => l['msg'] === 'daemon error');
      expect(line).toMatchObject({ level: 50, context: expect.stringMatching(/^store\.save /) });
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
      await sluice.stop();
    }
  }, 30_000);

  test('at SLUICE_LOG_LEVEL=info stderr carries the JSON line saying where it listens', async () => {
    const sluice = await startSluice([], { SLUICE_LOG_LEVEL: 'info' });
    try {
      // stderr is its own pipe: the line may arrive after the listening line on stdout.
      await vi.waitFor(() => expect(sluice.stderr()).toContain('Server listening at'));
      const lines = logLines(sluice.stderr());
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
      const token = await generatedToken(() => sluice.stderr());
      const local = `http://127.0.0.1:${sluice.port}`;
      expect((await api(local, 'GET', '/capabilities')).status).toBe(401);
      expect((await api(local, 'GET', '/health')).status).toBe(401);
      const ok = await api(local, 'GET', '/capabilities', {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(ok.status).toBe(200);
    } finally {
      await sluice.stop();
    }
  });
});
