// The subjects of `bench/agents.js`: the reference daemon `qwen serve` and `sluice serve --agent`,
// both running the same qwen-code `--acp` (the install the real-agent tests use) with the same
// scratch HOME settings against the same fake model, each started fresh on a free loopback port
// and stopped with its whole process tree.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'rolldown';
import { setTimeout as sleep } from 'node:timers/promises';
import { childEnv, listeningUrl, spawnCommand, spawnNode, stopChild, tempDir, tempDirs } from './children.js';
import { alive, treePids } from './proc-tree.js';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
/** The `sluice` command as users run it (its `#!` line sets the V8 flags). */
const MAIN = path.join(BENCH_DIR, '../packages/daemon/bin/sluice.js');
const QWEN_AGENT_TS = path.join(BENCH_DIR, '../scripts/qwen-agent.ts');
/** The model name both daemons' agents ask for. */
export const MODEL = 'bench-qwen-model';
const API_KEY = 'sk-bench-upstream';
/** A start (spawn → listening) slower than this is a failure, not a figure. */
const START_TIMEOUT_MS = 120_000;
/** How long an agent may take to exit after its daemon did before it counts as left behind. */
const EXIT_GRACE_MS = 3_000;

/**
 * `scripts/qwen-agent.ts` (the one source of the agent's install, version and HOME settings),
 * compiled for this plain-Node bench: the TypeScript is bundled next to this file (its paths are
 * relative to the repository root, one folder up), imported, and the compiled copy removed.
 */
export async function loadQwenAgentScript() {
  const { output } = await build({
    input: QWEN_AGENT_TS,
    platform: 'node',
    logLevel: 'warn',
    write: false,
    output: { format: 'esm' },
  });
  const file = path.join(BENCH_DIR, `.qwen-agent-${process.pid}.mjs`);
  fs.writeFileSync(file, output[0].code);
  try {
    return await import(pathToFileURL(file).href);
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** The fake OpenAI-compatible model (`bench/agents-model.js`) in a child process; `url` ends in `/v1`. */
export async function startModel() {
  const child = spawnNode([path.join(BENCH_DIR, 'agents-model.js')]);
  const url = await listeningUrl(child);
  /** `{ calls, words, firstTokenMs, chunkMs }`: the calls answered so far and what each answers. */
  const stats = async () => (await fetch(url.replace(/\/v1$/, '/calls'))).json();
  return { child, url, stats, calls: async () => (await stats()).calls };
}

/**
 * Everything a daemon start needs but its own flags: a fresh scratch HOME with qwen's settings,
 * a fresh workspace, and the environment both daemons (and so their agents) get.
 */
function freshConditions(qwen, modelUrl) {
  const home = qwen.createQwenHome({ model: MODEL });
  tempDirs.add(home);
  const dir = tempDir('sluice-bench-agents-');
  const workspace = path.join(dir, 'workspace');
  fs.mkdirSync(workspace);
  const env = qwen.qwenAgentEnv(home, { model: MODEL, baseURL: modelUrl, apiKey: API_KEY });
  return { dirs: [home, dir], dir, workspace, env: childEnv({ ...env, SLUICE_LOG_LEVEL: 'warn' }) };
}

/** The reference: `qwen serve` on Node 22, bound to the workspace, trusted loopback (no token). */
function qwenServe(install) {
  return {
    name: '`qwen serve`',
    command: (workspace) => [install.node, [install.cli, 'serve', '--port', '0', '--workspace', workspace]],
  };
}

/**
 * `sluice serve --agent "<qwen --acp>"` with default flags but `extra`, the fake model behind its
 * gateway; `env` is added to the daemon's environment (which its agents inherit).
 */
function sluiceServe(name, install, extra, env) {
  const agent = install.command.map((arg) => `"${arg}"`).join(' ');
  return {
    name,
    env,
    // The launcher itself (its `#!` line sets the V8 flags the `sluice` command runs with).
    command: (workspace, dir, modelUrl) => [
      MAIN,
      ['serve', '--port', '0', '--workspace', workspace, '--data-dir', path.join(dir, 'data')]
        .concat(['--agent', agent, '--provider', 'openai', '--model', MODEL, '--base-url', modelUrl])
        .concat(extra),
    ],
  };
}

/** The subjects, the reference first; `sluice.args` and `sluice.env` are added to every Sluice subject. */
export function subjects(install, sluice = { args: [], env: {} }) {
  const slots = [...sluice.args, '--model-max-concurrency', '16'];
  return [
    qwenServe(install),
    sluiceServe('Sluice default', install, sluice.args, sluice.env),
    sluiceServe('Sluice `--model-max-concurrency 16`', install, slots, sluice.env),
  ];
}

/**
 * Starts `subject` in fresh conditions; resolves once it printed its listening line, with the
 * time that took. `stop()` ends it with SIGTERM (SIGKILL after 10 s), gives its process tree
 * EXIT_GRACE_MS to follow, kills what is left and returns how many processes that was.
 */
export async function startSubject(subject, qwen, modelUrl) {
  const { dirs, dir, workspace, env } = freshConditions(qwen, modelUrl);
  const [command, args] = subject.command(workspace, dir, modelUrl);
  const started = performance.now();
  const child = spawnCommand(command, args, { ...env, ...subject.env });
  const url = await listeningUrl(child, START_TIMEOUT_MS);
  const startMs = performance.now() - started;
  const stop = async () => {
    const pids = treePids(child.pid).slice(1);
    await stopChild(child, 10_000);
    const deadline = performance.now() + EXIT_GRACE_MS;
    while (pids.some(alive) && performance.now() < deadline) await sleep(100);
    const leftOver = pids.filter(alive);
    for (const pid of leftOver) process.kill(pid, 'SIGKILL');
    for (const folder of dirs) fs.rmSync(folder, { recursive: true, force: true });
    return leftOver.length;
  };
  return { child, url, workspace, startMs, stop };
}
