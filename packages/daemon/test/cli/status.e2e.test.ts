import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { api, textPrompt } from '../helpers/http-client.js';
import { spawnCli } from '../helpers/cli-stream.js';
import { runSluice, startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

// One daemon whose echo model answers after a minute: the first prompt of a session runs, the
// second waits behind it, for as long as the tests read them. Shutdown cancels both.
const SECRET = 'status-must-not-print-this';
let daemon: SluiceProcess;
let sessionId: string;
const promptIds: string[] = [];

beforeAll(async () => {
  daemon = await startSluice(['--echo-delay-ms', '60000', '--drain-timeout-ms', '0']);
  sessionId = (await api(daemon.url, 'POST', '/session', { body: {} })).body.sessionId;
  for (let i = 0; i < 2; i++) {
    const admitted = await api(daemon.url, 'POST', `/session/${sessionId}/prompt`, {
      body: textPrompt(SECRET),
    });
    promptIds.push(admitted.body.promptId);
  }
});
afterAll(() => daemon?.stop());

describe('sluice status', () => {
  test('prints the scheduler, the live sessions and their pending prompts, without prompt text', async () => {
    const result = await runSluice(['status', '--url', daemon.url]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/scheduler\s+accepting\s+executing 1\/4/);
    expect(result.stdout).toContain('sessions   1 open');
    expect(result.stdout).toContain('pending prompts 2');
    expect(result.stdout).toMatch(new RegExp(`${sessionId}\\s+1\\s+2\\s+yes`));
    expect(result.stdout).toMatch(new RegExp(`${promptIds[0]}\\s+${sessionId}\\s+running`));
    expect(result.stdout).toMatch(new RegExp(`${promptIds[1]}\\s+${sessionId}\\s+queued`));
    expect(result.stdout).not.toContain(SECRET);
  });

  test('--json prints one object with the counts, the sessions and prompt sizes instead of text', async () => {
    const result = await runSluice(['status', '--url', daemon.url, '--json']);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({
      health: 'ok',
      provider: 'echo',
      draining: false,
      sessionCount: 1,
      pendingPromptTotal: 2,
      scheduler: { executing: 1, accepting: true },
      sessions: [{ sessionId, pendingPromptCount: 2, hasActivePrompt: true, clientCount: 1 }],
      pendingPrompts: [
        { promptId: promptIds[0], state: 'running', textBytes: SECRET.length },
        { promptId: promptIds[1], state: 'queued', textBytes: SECRET.length },
      ],
    });
    expect(report.scheduler.jobs[0]).toMatchObject({ sessionId, turnId: promptIds[0], phase: 'Executing' });
    expect(result.stdout).not.toContain(SECRET);
  });

  test('--watch redraws: every frame is a fresh read, until the command is interrupted', async () => {
    const watch = spawnCli(['status', '--url', daemon.url, '--json', '--watch', '100']);
    const frames = (await watch.waitForStdout((out) => out.split('\n').length > 3))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { at: string; sessionCount: number });
    expect(await watch.stop('SIGINT')).toBe(0);
    expect(frames.length).toBeGreaterThanOrEqual(3);
    expect(new Set(frames.map((frame) => frame.at)).size).toBe(frames.length);
    expect(frames.every((frame) => frame.sessionCount === 1)).toBe(true);
  });

  test('--watch as text separates its frames, each with the header', async () => {
    const watch = spawnCli(['status', '--url', daemon.url, '--watch', '100']);
    const out = await watch.waitForStdout((text) => text.split(`sluice ${daemon.url}`).length > 2);
    await watch.stop('SIGINT');
    expect(out.startsWith(`sluice ${daemon.url}  ok`)).toBe(true);
    expect(out).toContain(`\n\nsluice ${daemon.url}  ok`);
  });

  test.each([[['--watch']], [['--watch', '--json']]])(
    'the README example `sluice status` with %j and no value redraws at the default pace',
    async (flags) => {
      const watch = spawnCli(['status', '--url', daemon.url, ...flags]);
      const out = await watch.waitForStdout((text) => text.length > 0);
      expect(await watch.stop('SIGINT')).toBe(0);
      expect(watch.stderr()).toBe('');
      expect(out).toContain(flags.includes('--json') ? '"sessionCount":1' : `sluice ${daemon.url}  ok`);
    },
  );

  test('GET /daemon/sessions refuses a size out of range with invalid_size', async () => {
    const response = await api(daemon.url, 'GET', '/daemon/sessions?size=0');
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'invalid_size' });
    expect(response.body.error).toContain('[1, 1000]');
  });

  test('a daemon that is not running: exit 1 naming the URL', async () => {
    const closed = `http://127.0.0.1:${daemon.port === 1 ? 2 : 1}`;
    const result = await runSluice(['status', '--url', closed]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot reach the daemon at ${closed}`);
  });

  test('--url that is not http(s) is refused naming the flag', async () => {
    const result = await runSluice(['status', '--url', 'ftp://example.com']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('--url');
  });
});

describe('sluice status against a daemon that requires a token', () => {
  let guarded: SluiceProcess;
  beforeAll(async () => {
    guarded = await startSluice(['--require-auth', '--token', 'sekrit']);
  });
  afterAll(() => guarded?.stop());

  test('without the token: exit 1 saying to pass --token or SLUICE_TOKEN', async () => {
    const result = await runSluice(['status', '--url', guarded.url]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('pass --token or set SLUICE_TOKEN');
  });

  test('reads SLUICE_TOKEN from the environment, as serve does', async () => {
    const result = await runSluice(['status', '--url', guarded.url, '--json'], { SLUICE_TOKEN: 'sekrit' });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ health: 'ok', sessionCount: 0, pendingPrompts: [] });
  });
});
