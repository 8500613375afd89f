import { nonEmpty } from './argument-parsers.js';
import type { Kind } from './kinds.js';

/** An external agent written as a TOML table: `[[agent]]` with `name` and `command`. */
export interface AgentTable {
  name: string;
  command: string[];
}

/** An external ACP agent as the daemon runs it. */
export interface AgentConfig {
  name: string;
  command: readonly string[];
}

const AGENT_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/** Why a list of agents is invalid: not a non-empty list of `{name, command}` with unique names. */
function agentsViolation(value: unknown): string | undefined {
  if (!Array.isArray(value) || value.length === 0) return 'must be a non-empty array of {name, command}';
  const names = new Set<string>();
  for (const agent of value as Array<{ name?: unknown; command?: unknown }>) {
    if (typeof agent?.name !== 'string' || !AGENT_NAME.test(agent.name))
      return `agent names must start with a letter and hold letters, digits, "_", "." or "-"`;
    if (
      !Array.isArray(agent.command) ||
      agent.command.length === 0 ||
      agent.command.some((a) => typeof a !== 'string' || a === '')
    )
      return `agent "${agent.name}" needs a command: a non-empty array of non-empty strings`;
    if (names.has(agent.name)) return `agent name "${agent.name}" is given twice`;
    names.add(agent.name);
  }
  return undefined;
}

/**
 * `--agent`: repeatable `"<command> [args…]"` or `name="<command> [args…]"` (or `[[agent]]` tables
 * in a config file); the daemon holds them as named commands (cli/flag-config.ts parses them).
 */
export const agentList: Kind<Array<string | AgentTable>, ReadonlyArray<AgentConfig>> = {
  describe: 'list of agent commands',
  parse: (raw, previous = []) => [...previous, nonEmpty(raw)],
  violation: agentsViolation,
};
