import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The bundled CLI, as `npm start` and the `sluice` bin run it; `npm test` builds it first. */
export const SLUICE_MAIN = resolve(dirname(fileURLToPath(import.meta.url)), '../../dist/bundle/sluice.js');

function assertBuilt(): void {
  if (!existsSync(SLUICE_MAIN))
    throw new Error(`${SLUICE_MAIN} is missing: run \`npm run build\` before these tests (npm test does it)`);
}

/** A `sluice serve` child process that printed its listening line. */
export interface SluiceProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  stdout(): string;
  stderr(): string;
  /** Sends `signal` (default SIGTERM) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Resolves with the exit code once the process ended. */
  readonly exited: Promise<number | null>;
}

/** Starts `node dist/bundle/sluice.js serve --port 0 --data-dir <tmp> ...args` and waits for its listening line. */
export async function startSluice(args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<SluiceProcess> {
  assertBuilt();
  const dataDir = mkdtempSync(join(tmpdir(), 'sluice-test-'));
  const child = spawnCli(['serve', '--port', '0', '--data-dir', dataDir, ...args], env);
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<number | null>((resolveExit) =>
    child.once('close', (code) => resolveExit(code)),
  );
  void exited.then(() => rmSync(dataDir, { recursive: true, force: true }));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const onData = (): void => {
      const match = /^sluice listening on (https?:\/\/\S+)\n/m.exec(out);
      if (match?.[1]) {
        child.stdout.off('data', onData);
        resolveUrl(match[1]);
      }
    };
    child.stdout.on('data', onData);
    void exited.then((code) =>
      reject(new Error(`sluice exited with ${String(code)} before listening:\n${err}`)),
    );
  });
  return {
    child,
    url,
    port: Number(new URL(url).port),
    dataDir,
    stdout: () => out,
    stderr: () => err,
    exited,
    stop: (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Spawns the compiled CLI with no inherited tokens and quiet logs, its output piped. */
function spawnCli(args: string[], env: NodeJS.ProcessEnv) {
  return spawn(process.execPath, [SLUICE_MAIN, ...args], {
    env: {
      ...process.env,
      SLUICE_TOKEN: undefined,
      QWEN_SERVER_TOKEN: undefined,
      SLUICE_LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs the CLI to completion (for flag validation) and returns its exit code and output. */
export async function runSluice(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  assertBuilt();
  const child = spawnCli(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // 'close', not 'exit': the exit can be seen before the last of stderr has been read
  const code = await new Promise<number | null>((resolveExit) => child.once('close', (c) => resolveExit(c)));
  return { code, stdout, stderr };
}
