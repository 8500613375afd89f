import type { EnvironmentVariable } from '../kinds/index.js';
import { SETTING_ENTRIES } from '../settings/index.js';

/**
 * The environment variables the `sluice` command reads besides each flag's `SLUICE_<FLAG>`, for
 * `--help`: those the settings table names (settings/), and the bundle's own. A test scans the
 * sources for reads of the environment and holds this list to them.
 */
export const ENVIRONMENT_VARIABLES: readonly EnvironmentVariable[] = [
  ...SETTING_ENTRIES.flatMap(([, setting]) => [...(setting.ownEnv ?? []), ...(setting.fallbackEnv ?? [])]),
  ['SLUICE_LOG_LEVEL', 'level of the JSON log on stderr (default info; trace … fatal, silent)'],
  ['SLUICE_CODE_CACHE', '0 runs the bundle without the V8 code caches kept next to it'],
  ['UV_THREADPOOL_SIZE', "Node's file thread pool (default 4); agents' file requests use at most half of it"],
];

/** The "Environment variables:" section of `--help`. */
export function environmentHelp(): string {
  const width = Math.max(...ENVIRONMENT_VARIABLES.map(([name]) => name.length)) + 2;
  const lines = ENVIRONMENT_VARIABLES.map(([name, meaning]) => `  ${name.padEnd(width)}${meaning}`);
  return [
    '',
    'Environment variables:',
    '  Every flag --<name> is also read from SLUICE_<NAME> (upper snake case, e.g. SLUICE_MAX_SESSIONS),',
    '  shown as "env:" beside it; the command line wins over a --config file, which wins over them.',
    ...lines,
    "  An external agent process (--agent) inherits the environment but the daemon's secrets",
    '  (its token, fleet URLs), with OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL set to this',
    "  daemon's gateway, a credential of its own and the catalogue's default model, and",
    '  QWEN_CODE_NO_RELAUNCH=true unless set (qwen-code then runs as one process).',
  ].join('\n');
}
