import type { Command } from 'commander';
import type { AppliedConfigFile } from './config-file.js';
import type { ConfigFlags } from './config-options.js';
import { jsonLine } from './json-line.js';
import { LazyLogger } from './lazy-logger.js';

/** What a command starts with once its flags are final: its log, and its options with where they came from. */
export interface CommandStart<T> {
  logger: LazyLogger;
  /** The parsed options, the config file they were read from and the variables, by flag, that gave values. */
  options: T & { configFile?: AppliedConfigFile; environment: Readonly<Record<string, string>> };
}

/**
 * The first thing `serve` and `acp` do: read `--config` into the command's options (flags given
 * on the command line win), then open the log at `--log-level`. A config file that cannot be
 * used ends the process with one JSON line naming the key, and exit code 1.
 */
export async function startCommand<T>(
  command: Command,
  name: string,
  ignoredKeys: readonly string[] = [],
): Promise<CommandStart<T>> {
  let configFile: AppliedConfigFile | undefined;
  const path = (command.opts() as ConfigFlags).config;
  if (path !== undefined) {
    const { applyConfigFile, ConfigFileError } = await import('./config-file.js');
    try {
      configFile = await applyConfigFile(command, path, ignoredKeys);
    } catch (error) {
      if (!(error instanceof ConfigFileError)) throw error;
      process.stderr.write(jsonLine('error', name, error.message));
      process.exit(1);
    }
  }
  const { logLevel } = command.opts() as ConfigFlags;
  const source = command.getOptionValueSource('logLevel');
  const setting =
    source === 'env' ? 'SLUICE_LOG_LEVEL' : source === 'config' ? `${path}: log-level` : '--log-level';
  const environment = Object.fromEntries(
    command.options.flatMap((option) =>
      option.envVar !== undefined && command.getOptionValueSource(option.attributeName()) === 'env'
        ? [[option.long!, option.envVar]]
        : [],
    ),
  );
  return {
    logger: new LazyLogger({ level: logLevel ?? 'info', name, setting }),
    options: { ...(command.opts() as T), ...(configFile === undefined ? {} : { configFile }), environment },
  };
}

/** Says why the command cannot go on, as a JSON line whatever the level, and exits 1. */
export async function exitWithError(logger: LazyLogger, message: string): Promise<never> {
  logger.always('error', {}, message);
  await logger.flush();
  process.exit(1);
}
