// Child processes and temporary directories of the benchmarks: spawned with a quiet, token-free
// environment, tracked until they exit, and cleaned up together.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const children = new Set();
export const tempDirs = new Set();

export function tempDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export function childEnv(extra = {}) {
  return {
    ...process.env,
    SLUICE_TOKEN: undefined,
    QWEN_SERVER_TOKEN: undefined,
    SLUICE_LOG_LEVEL: 'warn',
    ...extra,
  };
}

/** Spawns `node ...args`, keeps the tail of its stderr, and tracks it until it exits. */
export function spawnNode(args, env = childEnv(), stdout = 'pipe') {
  return spawnCommand(process.execPath, args, env, stdout);
}

/**
 * Spawns the `sluice` command the way a user runs it: the built launcher itself, through its
 * `#!/usr/bin/env -S node …` line (packages/daemon/bin/sluice.js), so the bench measures the V8
 * flags the command sets.
 * `args[0]` is the launcher's path.
 */
export function spawnSluice(args, env = childEnv(), stdout = 'pipe') {
  return spawnCommand(args[0], args.slice(1), env, stdout);
}

/** Spawns `command ...args` as {@link spawnNode} does (another Node, another program). */
export function spawnCommand(command, args, env = childEnv(), stdout = 'pipe') {
  const child = spawn(command, args, { env, stdio: ['ignore', stdout, 'pipe'] });
  children.add(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr = (stderr + chunk).slice(-4_096)));
  child.stderrTail = () => stderr;
  child.exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve(code ?? signal);
    }),
  );
  return child;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the child is gone. */
export async function stopChild(child, graceMs = 3_000) {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await child.exited;
    clearTimeout(force);
  }
}

export async function cleanUp() {
  await Promise.all([...children].map((child) => stopChild(child, 1_000)));
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

/** Resolves with the URL of the child's `… listening on <url>` line (the URL ends at a space or the line's end). */
export function listeningUrl(child, timeoutMs = 15_000) {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error(`no listening line within ${timeoutMs} ms`)), timeoutMs);
    const fail = (error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${error.message}\n${child.stderrTail()}`));
    };
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/\S+)\s/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void child.exited.then((code) => fail(new Error(`exited with ${code} before listening`)));
  });
}
