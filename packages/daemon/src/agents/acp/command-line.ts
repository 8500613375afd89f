import { basename } from 'node:path';

/** One agent the daemon can run sessions on: a name and the argv that starts it. */
export interface AgentCommand {
  readonly name: string;
  /** `command[0]` is the executable (looked up on PATH), the rest its arguments; no shell. */
  readonly command: readonly string[];
}

const NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
const NAMED_SPEC = /^([A-Za-z][A-Za-z0-9_.-]{0,63})=(.*)$/s;

/**
 * Splits a command line into argv the way a POSIX shell would for plain words: whitespace
 * separates, '…' quotes literally, "…" quotes with `\` escaping `"`, `\` and `$`, and a bare
 * `\` escapes the next character. No expansion of any kind: the argv is run without a shell.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    const next = line[i + 1];
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else word += char;
    } else if (quote === '"') {
      if (char === '"') quote = undefined;
      else if (char === '\\' && next !== undefined && '"\\$`'.includes(next)) word += line[++i];
      else word += char;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      inWord = true;
      if (char === "'" || char === '"') quote = char;
      else if (char !== '\\') word += char;
      else if (next === undefined) throw new RangeError(`command ends with a lone backslash: ${line}`);
      else word += line[++i];
    }
  }
  if (quote !== undefined) throw new RangeError(`unterminated ${quote} quote in command: ${line}`);
  if (inWord) words.push(word);
  return words;
}

/**
 * Parses one `--agent` value: `"<command> [args…]"` (named after the executable's base name)
 * or `name="<command> [args…]"`. Throws a `RangeError` saying what is wrong.
 */
export function parseAgentSpec(spec: string): AgentCommand {
  const named = NAMED_SPEC.exec(spec.trim());
  let command = splitCommandLine(named ? named[2]! : spec);
  // `name="cmd args"` that reached us with its quotes (no shell took them off): one word to split.
  if (named && command.length === 1 && /^\s*["']/.test(named[2]!)) command = splitCommandLine(command[0]!);
  if (command.length === 0) throw new RangeError(`agent command is empty: ${JSON.stringify(spec)}`);
  const name = named ? named[1]! : basename(command[0]!).replace(/\.(c|m)?js$/, '');
  if (!NAME_PATTERN.test(name))
    throw new RangeError(
      `agent name ${JSON.stringify(name)} must start with a letter and hold only letters, digits, "_", "." and "-"; name it: --agent name="${spec}"`,
    );
  return { name, command };
}

/** Checks a list of agents: at least one, names unique. Throws a `RangeError` naming the problem. */
export function checkAgentCommands(agents: readonly AgentCommand[]): void {
  if (agents.length === 0) throw new RangeError('agents must name at least one agent');
  const seen = new Set<string>();
  for (const agent of agents) {
    if (typeof agent?.name !== 'string' || !NAME_PATTERN.test(agent.name))
      throw new RangeError(
        `agent name must match ${NAME_PATTERN.source}, got ${JSON.stringify(agent?.name)}`,
      );
    if (
      !Array.isArray(agent.command) ||
      agent.command.length === 0 ||
      agent.command.some((a) => typeof a !== 'string')
    )
      throw new RangeError(`agent "${agent.name}": command must be a non-empty array of strings`);
    if (seen.has(agent.name))
      throw new RangeError(`agent name "${agent.name}" is given twice; name them: --agent other="…"`);
    seen.add(agent.name);
  }
}
