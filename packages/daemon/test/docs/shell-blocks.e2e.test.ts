import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ROOT, documentationFiles, fencedBlocks, type DocTestMode } from '../../../../scripts/markdown.js';

// Issue 30 items 3 and 4, the doc-test: every `sh` block of the README and of the pages of docs/
// runs, in order, against a daemon started as the docs say (`npx sluice serve`, on a free port,
// after the build that `npm start` does), and a block that exits non-zero fails the test. A block
// preceded by `<!-- doc-test: skip (why) -->` is not run; one preceded by
// `<!-- doc-test: interrupt after N s (why) -->` gets Ctrl-C (SIGINT, to its whole process group,
// as a terminal sends it) N seconds after it first prints, and must end by that interrupt or
// with 0. The docs write the default
// address; the test points them at its own daemon (see forTestDaemon).

/** The user documentation: the README and the pages of docs/ (not the decisions or references). */
const PAGES = documentationFiles().filter((file) => file === 'README.md' || /^docs\/[^/]+\.md$/.test(file));
/** The most a block may take before it is killed and failed. */
const BLOCK_TIMEOUT_MS = 60_000;

interface Daemon {
  readonly pid: number;
  readonly port: number;
  readonly dataDir: string;
  readonly exited: Promise<unknown>;
}

let scratch: string;
let daemon: Daemon;

/** The environment of the daemon and of every block: no inherited token, quiet logs, no registry. */
function environment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, SLUICE_LOG_LEVEL: 'warn', NO_COLOR: '1' };
  delete env['SLUICE_TOKEN'];
  delete env['QWEN_SERVER_TOKEN'];
  // `npx` outside a TTY would otherwise fetch a missing command from the registry.
  env['npm_config_yes'] = 'false';
  return env;
}

async function startDaemon(): Promise<Daemon> {
  const dataDir = join(scratch, 'daemon');
  const child = spawn('npx', ['sluice', 'serve', '--port', '0', '--data-dir', dataDir], {
    cwd: ROOT,
    env: environment(),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => child.once('close', resolve));
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`npx sluice serve did not listen in 20 s:\n${err}`)),
      20_000,
    );
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /sluice listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (match === null) return;
      clearTimeout(timer);
      resolve(Number(match[1]));
    });
    void exited.then(() => reject(new Error(`npx sluice serve exited before listening:\n${err}`)));
  });
  return { pid: child.pid!, port, dataDir, exited };
}

/**
 * `script` pointed at the test's daemon: the default address (`localhost:4170`,
 * `127.0.0.1:4170`) becomes its port, `sluice status` gets its `--url`, `sluice journal` its
 * `--data-dir`, and another `sluice serve` a scratch data directory (and a free port when the
 * doc names none), so that nothing touches a daemon or a `.sluice/` of the checkout.
 */
function forTestDaemon(script: string): string {
  const url = `http://127.0.0.1:${daemon.port}`;
  return script
    .replace(/\b(localhost|127\.0\.0\.1):4170\b/g, `$1:${daemon.port}`)
    .replace(/\bnpx sluice status\b(?!.*--url)/g, `npx sluice status --url ${url}`)
    .replace(/\bnpx sluice journal\b(?!.*--data-dir)/g, `npx sluice journal --data-dir ${daemon.dataDir}`)
    .replace(/\bnpx sluice serve\b(?!.*--help)(.*)$/gm, (_all, rest: string) => {
      const port = /--port\b/.test(rest) ? '' : ' --port 0';
      return `npx sluice serve --data-dir "$(mktemp -d -p ${scratch})"${port}${rest}`;
    });
}

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/**
 * Runs one block in bash (`set -eo pipefail`) with the variables earlier blocks of its page set
 * (kept in `state`, a file of assignments), and adds the ones it sets.
 */
async function runBlock(script: string, mode: DocTestMode, state: string): Promise<Outcome> {
  const assigned = [...script.matchAll(/^\s*(?:export\s+)?([A-Za-z_]\w*)=/gm)].map((match) => match[1]!);
  const save = assigned.map((name) => `printf '%s=%q\\n' ${name} "$${name}" >> '${state}'`);
  const full = ['set -eo pipefail', `. '${state}'`, script, ...save].join('\n');
  const child = spawn('bash', ['-c', full], {
    cwd: ROOT,
    env: environment(),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let interrupt: NodeJS.Timeout | undefined;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    // The time runs from the first output, so that a slow start (npx on a busy machine) counts not.
    if (mode.kind === 'interrupt' && interrupt === undefined)
      interrupt = setTimeout(() => group('SIGINT'), mode.afterMs);
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const group = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  let timedOut = false;
  const kill = setTimeout(() => {
    timedOut = true;
    group('SIGKILL');
  }, BLOCK_TIMEOUT_MS);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal])),
  );
  clearTimeout(interrupt);
  clearTimeout(kill);
  group('SIGKILL'); // whatever the block left running in its group
  return { code, signal, stdout, stderr, timedOut };
}

/** Why an outcome fails its block, or undefined when it passes. */
function failureOf(outcome: Outcome, mode: DocTestMode): string | undefined {
  if (outcome.timedOut)
    return mode.kind === 'interrupt' && outcome.stdout === ''
      ? `printed nothing in ${BLOCK_TIMEOUT_MS} ms`
      : `still running after ${BLOCK_TIMEOUT_MS} ms`;
  if (mode.kind === 'interrupt') {
    const byInterrupt = outcome.code === 0 || outcome.code === 130 || outcome.signal === 'SIGINT';
    if (!byInterrupt)
      return `ended with ${outcome.code ?? outcome.signal} before or instead of the interrupt`;
    return undefined;
  }
  return outcome.code === 0 ? undefined : `exited with ${outcome.code ?? outcome.signal}`;
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'sluice-doc-test-'));
  daemon = await startDaemon();
}, 30_000);

afterAll(async () => {
  if (daemon !== undefined) {
    process.kill(-daemon.pid, 'SIGTERM');
    await daemon.exited;
  }
  rmSync(scratch, { recursive: true, force: true });
});

describe('the doc-test: the shell blocks of the documentation run against a built daemon', () => {
  test('the pages it runs have blocks to run', () => {
    const runnable = PAGES.flatMap((page) =>
      fencedBlocks(readFileSync(join(ROOT, page), 'utf8'), page).filter(
        (block) => block.lang === 'sh' && block.mode.kind !== 'skip',
      ),
    );
    expect(PAGES).toEqual(expect.arrayContaining(['README.md', 'docs/getting-started.md']));
    expect(runnable.length).toBeGreaterThan(15);
  });

  test.each(PAGES)(
    '%s: every sh block runs',
    async (page) => {
      const blocks = fencedBlocks(readFileSync(join(ROOT, page), 'utf8'), page).filter(
        (block) => block.lang === 'sh' && block.mode.kind !== 'skip',
      );
      const state = join(scratch, `${page.replace(/\W/g, '_')}.state`);
      writeFileSync(state, '');
      const failures: string[] = [];
      for (const block of blocks) {
        const outcome = await runBlock(forTestDaemon(block.text), block.mode, state);
        const failure = failureOf(outcome, block.mode);
        if (failure !== undefined)
          failures.push(
            `${page}:${block.line} ${failure}\n${block.text}\n--- stdout\n${outcome.stdout.slice(-2000)}\n--- stderr\n${outcome.stderr.slice(-2000)}`,
          );
      }
      expect(failures).toEqual([]);
    },
    300_000,
  );
});
