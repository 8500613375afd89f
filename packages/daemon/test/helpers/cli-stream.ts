import { spawn, type ChildProcess } from 'node:child_process';
import { SLUICE_MAIN } from './sluice-process.js';

/** A `sluice` CLI child that keeps running (`status --watch`, `journal --follow`), its output read as it comes. */
export interface StreamingCli {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once `predicate` holds for the stdout received so far; rejects if the child exits first. */
  waitForStdout(predicate: (stdout: string) => boolean): Promise<string>;
  /** Sends `signal` (default SIGINT) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Spawns `node dist/bundle/sluice.js ...args` with no inherited tokens. */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}): StreamingCli {
  const child = spawn(process.execPath, [SLUICE_MAIN, ...args], {
    env: { ...process.env, SLUICE_TOKEN: undefined, QWEN_SERVER_TOKEN: undefined, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    for (const listener of [...listeners]) listener();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    waitForStdout: (predicate) =>
      new Promise<string>((resolve, reject) => {
        const check = (): void => {
          if (!predicate(out)) return;
          listeners.delete(check);
          resolve(out);
        };
        listeners.add(check);
        void exited.then((code) => {
          listeners.delete(check);
          reject(new Error(`sluice exited with ${String(code)} first; stdout:\n${out}\nstderr:\n${err}`));
        });
        check();
      }),
    stop: (signal = 'SIGINT') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
