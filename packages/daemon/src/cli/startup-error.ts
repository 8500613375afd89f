import type { AppliedConfigFile } from './config-file.js';

/** Thrown for a start-up refusal; the CLI prints the message and exits 1. */
export class StartupError extends Error {}

/** Where a command's options came from: the config file and the variables that gave values. */
// A type, not an interface: the options are read as a record (cli/flag-config.ts).
export type OptionSources = {
  /** The config file the options were read from, if any: errors then name its keys. */
  configFile?: AppliedConfigFile;
  /** The variables the options were read from, by flag: errors then name the variable. */
  environment?: Readonly<Record<string, string>>;
};

/** A setting as the operator gave it: the config file's key, or the variable, it came from; else the flag. */
export function settingName(flag: string, { configFile, environment }: OptionSources): string {
  const key = flag.replace(/^--/, '');
  if (configFile?.keys.includes(key)) return `${configFile.path}: ${key}`;
  return environment?.[flag] ?? flag;
}
