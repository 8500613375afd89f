import type { Kind } from './kinds.js';

/** The topics of `--help` and of docs/reference/configuration.md, in the order they are listed. */
export const TOPICS = [
  'server',
  'security',
  'sessions',
  'model scheduler',
  'model provider',
  'agents',
  'storage',
  'fleet',
  'lifecycle',
  'logging',
] as const;

export type Topic = (typeof TOPICS)[number];

/** An environment variable and what it means, as `--help` lists it. */
export type EnvironmentVariable = readonly [name: string, meaning: string];

/**
 * One setting of the daemon or of its command line, declared once: everything else — commander's
 * options, `DaemonConfig`, the validation of a host's values, the TOML keys, the environment
 * variables, `--help` and docs/reference/configuration.md — is derived from these fields.
 *
 * The entry's key is the option's attribute (commander's camelCase of the flag), which is also
 * the `DaemonConfig` key unless `config` names another.
 */
export interface Setting<C = unknown, V = C> {
  /** The flag with its argument, `--port <port>`; absent: a setting only a host passes (`createDaemon`). */
  readonly flag?: string;
  readonly topic: Topic;
  readonly kind: Kind<C, V>;
  /** One line for `--help`, without the default. */
  readonly help: string;
  /** The value an unset setting takes; the daemon fills it in (and commander, for the help). */
  readonly default?: C;
  /** The default as the help states it, when something else applies it (the scheduler, a computation). */
  readonly defaultText?: string;
  /**
   * `daemon`: a `DaemonConfig` setting (`serve` and `acp`); `serve`: the HTTP server's (`acp`
   * skips the key in a config file); `command`: read by the command itself (`--config`).
   */
  readonly scope: 'daemon' | 'serve' | 'command';
  /** The `DaemonConfig` key, when it is not the entry's key (`baseURL` of `--base-url`). */
  readonly config?: string;
  /**
   * Variables the code that uses the value reads itself, in this order, instead of commander's
   * `SLUICE_<FLAG>` (the token, whose empty value is refused by the variable's name).
   */
  readonly ownEnv?: readonly EnvironmentVariable[];
  /** Variables read after the flag and `SLUICE_<FLAG>`, by the code that uses the value. */
  readonly fallbackEnv?: readonly EnvironmentVariable[];
  /** Left out of `--help` (still documented). */
  readonly hidden?: boolean;
  /**
   * Its value is a credential of the daemon's (its token, a URL that may carry a password): the
   * variables that can hold it are kept from the agent processes the daemon starts.
   */
  readonly secret?: boolean;
}

/** The environment variables that can set `setting`, in the order they are read. */
export function variableNames(setting: Setting<unknown, unknown>): string[] {
  return [
    environmentName(setting),
    ...(setting.ownEnv ?? []).map(([name]) => name),
    ...(setting.fallbackEnv ?? []).map(([name]) => name),
  ].flatMap((name) => (name === undefined ? [] : [name]));
}

/** The value a setting's `DaemonConfig` field holds. */
export type ConfigValue<S> = S extends { kind: Kind<infer _C, infer V> } ? V : never;
/** A setting's `DaemonConfig` key: its `config`, else its entry's key `K`. */
export type ConfigKey<K, S> = S extends { config: infer N extends string } ? N : K;

/** The configuration a table of settings gives, every field optional (as a host passes it). */
export type ConfigOf<T> = {
  -readonly [K in keyof T as ConfigKey<K, T[K]>]?: ConfigValue<T[K]>;
};

/** A table of settings: entry key → setting. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each entry keeps its own value type
export type SettingTable = Readonly<Record<string, Setting<any, any>>>;

/** The long flag without its argument and leading dashes: the TOML key (`max-sessions`). */
export function flagName(setting: Setting<unknown, unknown>): string | undefined {
  return setting.flag?.split(' ', 1)[0]!.replace(/^--/, '');
}

/** The variable commander reads for the flag: `SLUICE_` and the flag in upper snake case. */
export function environmentName(setting: Setting<unknown, unknown>): string | undefined {
  const name = flagName(setting);
  if (name === undefined || setting.ownEnv !== undefined) return undefined;
  return `SLUICE_${name.replace(/-/g, '_').toUpperCase()}`;
}
