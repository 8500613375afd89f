import { Option, type Command } from 'commander';
import { LOG_LEVELS } from './lazy-logger.js';

/** The keys `sluice acp` skips in a config file written for `serve` too: the HTTP server's. */
export const SERVE_ONLY_KEYS: readonly string[] = [
  'port',
  'hostname',
  'token',
  'require-auth',
  'allow-origin',
  'request-timeout-ms',
  'max-connections',
  'sse-heartbeat-ms',
];

/** What the config and log flags add to a command's options. */
export interface ConfigFlags {
  /** `--config`: a TOML file of flags (default env `SLUICE_CONFIG`). */
  config?: string;
  /** `--log-level`: pino's level names (default env `SLUICE_LOG_LEVEL`, then `info`). */
  logLevel?: string;
}

/** `--config <file>` and `--log-level <level>`, for `serve` and `acp` alike. */
export function configOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--config <file>',
        'read flags from a TOML file: each key is a flag without its "--" (port = 4170); flags given here win',
      ).env('SLUICE_CONFIG'),
    )
    .addOption(
      new Option(
        '--log-level <level>',
        'JSON log lines on stderr at this level and above; debug logs every request',
      )
        .choices(Object.keys(LOG_LEVELS))
        .env('SLUICE_LOG_LEVEL'),
    );
}
