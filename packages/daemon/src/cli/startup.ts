import type { Command } from 'commander';
import type { AppliedConfigFile } from './config-file.js';
import type { ConfigFlags } from './config-options.js';
import { jsonLine } from './json-line.js';
import { LazyLogger } from './lazy-logger.js';

/** What a command starts with once its flags are final: its log, and the config file it read. */
export interface CommandStart {
  logger: LazyLogger;
  configFile: AppliedConfigFile | undefined;
}

/**
 * The first thing `serve` and `acp` do: read `--config` into the command's options (flags given
 * on the command line win), then open the log at `--log-level`. A config file that cannot be
 * used ends the process with one JSON line naming the key, and exit code 1.
 */
export async function startCommand(
  command: Command,
  name: string,
  ignoredKeys: readonly string[] = [],
): Promise<CommandStart> {
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
  return { logger: new LazyLogger({ level: logLevel ?? 'info', name, setting }), configFile };
}

/** Says why the command cannot go on, as a JSON line whatever the level, and exits 1. */
export async function exitWithError(logger: LazyLogger, message: string): Promise<never> {
  logger.always('error', {}, message);
  await logger.flush();
  process.exit(1);
}
