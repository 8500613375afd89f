import { readFileSync } from 'node:fs';
import { describeValue } from '@sluice/protocol';
import type { Command, Option } from 'commander';
import type { AgentTable } from '../kinds/index.js';

/** A config file that cannot be read, is not TOML, or holds an unknown key or a bad value. */
export class ConfigFileError extends Error {
  readonly code = 'invalid_config_file';
}

export type { AgentTable };

/** What {@link applyConfigFile} set: the file, and the keys whose values came from it. */
export interface AppliedConfigFile {
  path: string;
  keys: readonly string[];
}

/**
 * Reads the TOML file at `path` into `command`'s options, as if each key were given as the flag
 * of that name (`port = 4170` is `--port 4170`): each value goes through the flag's own parser,
 * so the file and the command line accept the same values. A flag given on the command line
 * wins over the file. An unknown key or a bad value is a {@link ConfigFileError} naming the key's
 * path in the file (`sluice.toml: agent[1].command: …`). Keys of `ignoredKeys` are skipped (the
 * `serve`-only keys when `sluice acp` reads a file written for both). smol-toml is loaded here,
 * so a start without a file never loads it.
 */
export async function applyConfigFile(
  command: Command,
  path: string,
  ignoredKeys: readonly string[] = [],
): Promise<AppliedConfigFile> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigFileError(`${path}: cannot read the config file: ${(error as Error).message}`);
  }
  const { parse, TomlError } = await import('smol-toml');
  let table: Record<string, unknown>;
  try {
    table = parse(text);
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    // Its first line says what is wrong; the rest quotes the file, which may hold the token.
    const reason = error.message.split('\n', 1)[0]!.replace(/^Invalid TOML document: /, '');
    throw new ConfigFileError(
      `${path}: line ${error.line}, column ${error.column}: not valid TOML: ${reason}`,
    );
  }
  const keys: string[] = [];
  for (const [entry, value] of Object.entries(table)) {
    // `[[model]]` tables are the model catalogue (`--models`); `model = "…"` stays `--model`.
    const key = entry === 'model' && Array.isArray(value) && value.some(isTable) ? 'models' : entry;
    const option = command.options.find((candidate) => candidate.long === `--${key}`);
    if (option === undefined || key === 'config') {
      if (ignoredKeys.includes(key)) continue;
      throw new ConfigFileError(
        `${path}: ${key}: unknown key; the keys are the flags of \`sluice ${command.name()} --help\` without their leading "--"`,
      );
    }
    const attribute = option.attributeName();
    if (command.getOptionValueSource(attribute) === 'cli') continue;
    command.setOptionValueWithSource(attribute, optionValue(option, key, value, path), 'config');
    keys.push(key);
  }
  return { path, keys };
}

/** The value `value` gives the option, as the flag's parser makes it; throws naming `path: key`. */
function optionValue(option: Option, key: string, value: unknown, path: string): unknown {
  const refuse = (at: string, reason: string, got: unknown): never => {
    throw new ConfigFileError(`${path}: ${at}: ${reason} (got ${describeValue(got)})`);
  };
  if (option.isBoolean())
    return typeof value === 'boolean' ? value : refuse(key, 'must be true or false', value);
  if (!Array.isArray(value)) return parseOne(option, value, undefined, key, refuse);
  // The catalogue's tables are read whole, naming a bad key where the daemon reads them (models/).
  if (key === 'models')
    return value.every(isTable) ? value : refuse('model', 'must be [[model]] tables', value);
  let previous: unknown = undefined;
  for (const [index, element] of value.entries()) {
    const at = `${key}[${index}]`;
    previous =
      key === 'agent' && isTable(element)
        ? [...((previous as unknown[] | undefined) ?? []), agentTable(element, at, refuse)]
        : parseOne(option, element, previous, at, refuse);
  }
  // A flag that is not repeatable keeps only its last value: a list of them is a mistake.
  if (!Array.isArray(previous)) return refuse(key, 'must be a single value, not a list', value);
  return previous;
}

/** One scalar through the option's parser (its choices, its range), as a flag's text would go. */
function parseOne(
  option: Option,
  value: unknown,
  previous: unknown,
  at: string,
  refuse: (at: string, reason: string, got: unknown) => never,
): unknown {
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'number' || typeof value === 'bigint'
        ? String(value)
        : undefined;
  if (text === undefined) return refuse(at, 'must be a string or a number', value);
  if (option.parseArg === undefined) return text;
  try {
    return option.parseArg(text, previous);
  } catch (error) {
    return refuse(at, (error as Error).message, value);
  }
}

/** An `[[agent]]` table: a name and a non-empty command of non-empty strings, nothing else. */
function agentTable(
  table: Record<string, unknown>,
  at: string,
  refuse: (at: string, reason: string, got: unknown) => never,
): AgentTable {
  for (const key of Object.keys(table))
    if (key !== 'name' && key !== 'command')
      refuse(`${at}.${key}`, 'unknown key; an agent has name and command', table[key]);
  const { name, command } = table;
  if (typeof name !== 'string' || name === '') refuse(`${at}.name`, 'must be a non-empty string', name);
  if (
    !Array.isArray(command) ||
    command.length === 0 ||
    command.some((part) => typeof part !== 'string' || part === '')
  )
    refuse(`${at}.command`, 'must be a non-empty array of non-empty strings', command);
  return { name: name as string, command: command as string[] };
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}
