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

/**
 * `sluice serve --agent qwen=…` (the built bundle) in front of the fake upstream, with `flags`
 * added. The agent processes inherit the daemon's environment: the scratch HOME holds qwen's
 * settings; OPENAI_BASE_URL / OPENAI_API_KEY are replaced per process by the gateway's.
 */
export function startQwenSluice(
  setup: QwenSluiceSetup,
  flags: readonly string[] = [],
): Promise<SluiceProcess> {
  const command = setup.agent.map((arg) => `"${arg}"`).join(' ');
  return startSluice(
    ['--workspace', setup.workspace, '--agent', `qwen=${command}`, ...flags]
      .concat(['--provider', 'openai', '--model', setup.model, '--base-url', setup.upstream.baseURL])
      .concat(['--drain-timeout-ms', '0']),
    {
      HOME: setup.home,
      OPENAI_API_KEY: 'sk-upstream',
      OPENAI_MODEL: setup.model,
      QWEN_TELEMETRY_ENABLED: 'false',
      QWEN_DISABLE_AUTO_TITLE: '1',
    },
  );
}
