import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { logLines } from '../helpers/log-lines.js';
import { runSluice, SLUICE_MAIN } from '../helpers/sluice-process.js';

// How a command says why it stops (docs/decisions/041): one readable line for a person at a
// terminal, `sluice: <message> (<code>)`; a JSON line with the code for a program.
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'sluice-error-lines-'));
let taken: Server;
let takenPort: number;
/** A port nothing listens on: connections are refused at once. */
let closedPort: number;

/** Runs `sluice args…` on a real terminal (util-linux `script` gives it a pty); its output, CRs removed. */
async function onTerminal(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; output: string }> {
  const command = [process.execPath, SLUICE_MAIN, ...args].map((arg) => `'${arg}'`).join(' ');
  const options = { env: { ...process.env, SLUICE_TOKEN: undefined, ...env }, timeout: 20_000 };
  try {
    const { stdout } = await run('script', ['-qefc', command, '/dev/null'], options);
    return { code: 0, output: stdout.replace(/\r/g, '') };
  } catch (error) {
    const { code, stdout } = error as { code: number; stdout: string };
    return { code, output: stdout.replace(/\r/g, '') };
  }
}

beforeAll(async () => {
  taken = createServer();
  await new Promise<void>((resolveListen) => taken.listen(0, '127.0.0.1', resolveListen));
  takenPort = (taken.address() as { port: number }).port;
  const closed = createServer();
  await new Promise<void>((resolveListen) => closed.listen(0, '127.0.0.1', resolveListen));
  closedPort = (closed.address() as { port: number }).port;
  await new Promise((resolveClose) => closed.close(resolveClose));
});
afterAll(() => {
  taken.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('on a terminal', () => {
  test('a refused flag is one line naming the flag and the code, no JSON and no usage dump', async () => {
    const { code, output } = await onTerminal(['serve', '--port', 'abc']);
    expect(code).toBe(1);
    expect(output).toBe(
      "sluice: option '--port <port>' argument 'abc' is invalid. must be an integer in [0, 65535] (invalid_argument)\n",
    );
  });

  test('a daemon that cannot start says why in one line ending with its code', async () => {
    const { code, output } = await onTerminal(['serve', '--port', String(takenPort), '--data-dir', dir]);
    expect(code).toBe(1);
    const lines = output.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^sluice: --port: cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE.* \(listen_failed\)$/,
    );
  });

  test('operator commands too: an unreachable daemon for status, a missing data directory for journal', async () => {
    const status = await onTerminal(['status', '--url', `http://127.0.0.1:${closedPort}`]);
    expect(status.code).toBe(1);
    expect(status.output).toMatch(/^sluice: cannot reach the daemon at .* \(daemon_unreachable\)\n$/);
    const journal = await onTerminal(['journal', '--data-dir', join(dir, 'missing')]);
    expect(journal.output).toMatch(
      /^sluice: data directory ".*missing" does not exist; .* \(journal_unavailable\)\n$/,
    );
  });

  test('--log-format json (or SLUICE_LOG_FORMAT=json) keeps JSON lines on a terminal', async () => {
    const flag = await onTerminal(['serve', '--port', 'abc', '--log-format', 'json']);
    expect(logLines(flag.output)[0]).toMatchObject({ level: 50, code: 'invalid_argument' });
    const env = await onTerminal(['journal', '--data-dir', join(dir, 'missing')], {
      SLUICE_LOG_FORMAT: 'json',
    });
    expect(logLines(env.output)[0]).toMatchObject({ code: 'journal_unavailable' });
  });
});

describe('stderr not a terminal', () => {
  test('the same failures are JSON lines carrying the code', async () => {
    const flag = await runSluice(['serve', '--bogus']);
    expect(flag.code).toBe(1);
    expect(logLines(flag.stderr)).toEqual([
      expect.objectContaining({
        level: 50,
        name: 'sluice',
        code: 'unknown_option',
        msg: "error: unknown option '--bogus'",
      }),
    ]);
    const listen = await runSluice(['serve', '--port', String(takenPort), '--data-dir', dir]);
    expect(logLines(listen.stderr).at(-1)).toMatchObject({ code: 'listen_failed' });
  });

  test('--log-format text, or a config file saying so, gives the one readable line', async () => {
    const flag = await runSluice([
      'status',
      '--url',
      `http://127.0.0.1:${closedPort}`,
      '--log-format',
      'text',
    ]);
    expect(flag.stderr).toMatch(/^sluice: cannot reach the daemon at .* \(daemon_unreachable\)\n$/);
    const config = join(dir, 'sluice.toml');
    writeFileSync(config, `log-format = "text"\nport = ${takenPort}\ndata-dir = "${dir}"\n`);
    const fromFile = await runSluice(['serve', '--config', config]);
    expect(fromFile.code).toBe(1);
    expect(fromFile.stderr).toMatch(/^sluice: --port: cannot listen on .* \(listen_failed\)\n$/);
  });

  test('an unknown --log-format is refused like any other value, listing the choices', async () => {
    const result = await runSluice(['serve', '--log-format', 'yaml']);
    expect(result.code).toBe(1);
    expect(logLines(result.stderr)[0]!['msg']).toContain('Allowed choices are auto, json, text');
  });
});
