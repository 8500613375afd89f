import type { Command } from 'commander';
import type { AppliedConfigFile } from './config-file.js';
import type { ConfigFlags } from './config-options.js';
import type { ErrorReport } from './error-report.js';
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
 * used ends the process with one line naming the key (`report`'s format), and exit code 1.
 */
export async function startCommand<T>(
  command: Command,
  name: string,
  report: ErrorReport,
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
      process.stderr.write(report.line(error.message, error.code));
      process.exit(1);
    }
  }
  const { logLevel, logFormat } = command.opts() as ConfigFlags;
  report.use(logFormat);
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

/**
 * Says why the command cannot go on, whatever the level, and exits 1: as a JSON line of the log
 * (with `code`), or as one readable line when `report` writes for a terminal.
 */
export async function exitWithError(
  report: ErrorReport,
  logger: LazyLogger,
  message: string,
  code: string,
): Promise<never> {
  if (report.json) logger.always('error', { code }, message);
  else process.stderr.write(report.line(message, code));
  await logger.flush();
  process.exit(1);
}
