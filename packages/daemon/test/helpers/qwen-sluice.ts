import type { FakeOpenAIServer } from '../../../runtime/test/helpers/fake-openai-server.js';
import { startSluice, type SluiceProcess } from './sluice-process.js';

/** What a built daemon serving the real qwen agent is started with. */
export interface QwenSluiceSetup {
  workspace: string;
  /** The agent's argv (`installQwenAgent().command`). */
  agent: readonly string[];
  /** The scratch HOME of `createQwenHome`. */
  home: string;
  model: string;
  upstream: FakeOpenAIServer;
}

/** `--workspace <workspace> --agent qwen=<argv>` and no drain wait: how the tests serve the real qwen. */
export function qwenAgentFlags(workspace: string, agent: readonly string[]): string[] {
  const command = agent.map((arg) => `"${arg}"`).join(' ');
  return ['--workspace', workspace, '--agent', `qwen=${command}`, '--drain-timeout-ms', '0'];
}

/** The daemon's environment, which its qwen processes inherit: the scratch HOME, telemetry and titles off. */
export function qwenDaemonEnv(home: string): Record<string, string> {
  return { HOME: home, QWEN_TELEMETRY_ENABLED: 'false', QWEN_DISABLE_AUTO_TITLE: '1' };
}

/**
 * `sluice serve --agent qwen=…` (the built bundle) in front of the fake upstream, with `flags`
 * added. The agent processes inherit the daemon's environment: the scratch HOME holds qwen's
 * settings; OPENAI_BASE_URL / OPENAI_API_KEY are replaced per process by the gateway's.
 */
export function startQwenSluice(
  setup: QwenSluiceSetup,
  flags: readonly string[] = [],
): Promise<SluiceProcess> {
  return startSluice(
    [...qwenAgentFlags(setup.workspace, setup.agent), ...flags].concat([
      '--provider',
      'openai',
      '--model',
      setup.model,
      '--base-url',
      setup.upstream.baseURL,
    ]),
    { ...qwenDaemonEnv(setup.home), OPENAI_API_KEY: 'sk-upstream', OPENAI_MODEL: setup.model },
  );
}
