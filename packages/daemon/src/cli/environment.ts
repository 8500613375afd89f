/**
 * The environment variables the `sluice` command reads, for `--help`. A test scans the sources
 * for reads of the environment and holds this table to them.
 */
export const ENVIRONMENT_VARIABLES: ReadonlyArray<readonly [name: string, meaning: string]> = [
  ['SLUICE_TOKEN', 'bearer token when --token is not given'],
  ['QWEN_SERVER_TOKEN', 'bearer token when neither --token nor SLUICE_TOKEN is set (as `qwen serve`)'],
  ['SLUICE_LOG_LEVEL', 'level of the JSON log on stderr (default info; trace … fatal, silent)'],
  ['SLUICE_CODE_CACHE', '0 runs the bundle without the V8 code caches kept next to it'],
  ['OPENAI_API_KEY', 'API key --provider openai sends (none = no Authorization header)'],
  ['OPENAI_BASE_URL', 'base URL of --provider openai when --base-url is not given'],
];

/** The "Environment variables:" section of `--help`. */
export function environmentHelp(): string {
  const width = Math.max(...ENVIRONMENT_VARIABLES.map(([name]) => name.length)) + 2;
  const lines = ENVIRONMENT_VARIABLES.map(([name, meaning]) => `  ${name.padEnd(width)}${meaning}`);
  return [
    '',
    'Environment variables:',
    ...lines,
    '  An external agent process (--agent) inherits the environment, with OPENAI_BASE_URL and',
    "  OPENAI_API_KEY set to this daemon's gateway and its session's credential.",
  ].join('\n');
}
