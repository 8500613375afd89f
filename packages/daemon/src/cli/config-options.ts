import { flagName } from '../kinds/index.js';
import { SETTING_ENTRIES } from '../settings/index.js';

/** The keys `sluice acp` skips in a config file written for `serve` too: the HTTP server's. */
export const SERVE_ONLY_KEYS: readonly string[] = SETTING_ENTRIES.filter(
  ([, setting]) => setting.scope === 'serve',
).flatMap(([, setting]) => flagName(setting) ?? []);

/** What the config and log flags add to a command's options. */
export interface ConfigFlags {
  /** `--config`: a TOML file of flags (default env `SLUICE_CONFIG`). */
  config?: string;
  /** `--log-level`: pino's level names (default env `SLUICE_LOG_LEVEL`, then `info`). */
  logLevel?: string;
  /** `--log-format`: how the error that stops the command is written (docs/decisions/041). */
  logFormat?: string;
}
