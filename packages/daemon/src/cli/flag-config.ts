import { resolve } from 'node:path';
import { parseAgentSpec, type AgentCommand } from '../agents/index.js';
import { DaemonConfigError, type DaemonConfig } from '../config.js';
import type { AgentTable } from '../kinds/index.js';
import { SETTING_ENTRIES } from '../settings/index.js';
import type { DaemonFlags } from './serve.js';

const DAEMON_SETTINGS = SETTING_ENTRIES.filter(([, setting]) => setting.scope === 'daemon');

/** Config keys as the flags that set them, for error messages. */
export const FLAG_OF: Readonly<Record<string, string>> = Object.fromEntries(
  DAEMON_SETTINGS.flatMap(([key, setting]) =>
    setting.flag === undefined ? [] : [[setting.config ?? key, setting.flag.split(' ', 1)[0]!]],
  ),
);

/** The daemon's configuration from the parsed flags (validated later, naming the flag). */
export function daemonConfig(options: DaemonFlags): DaemonConfig {
  const config: Record<string, unknown> = { workspace: resolve(options.workspace ?? process.cwd()) };
  const given = options as Record<string, unknown>;
  for (const [key, setting] of DAEMON_SETTINGS) {
    const value = given[key];
    if (value === undefined || key === 'workspace') continue;
    config[setting.config ?? key] = key === 'agent' ? (value as AgentSpec[]).map(agentSpec) : value;
  }
  return config as DaemonConfig;
}

type AgentSpec = string | AgentTable;

/** One `--agent` value as a named command; a bad one is a {@link DaemonConfigError} of `agents`. */
function agentSpec(spec: AgentSpec): AgentCommand {
  if (typeof spec !== 'string') return spec;
  try {
    return parseAgentSpec(spec);
  } catch (error) {
    throw new DaemonConfigError('agents', (error as Error).message);
  }
}
