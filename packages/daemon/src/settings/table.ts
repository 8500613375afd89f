import { AGENT_SETTINGS } from './agent-settings.js';
import { variableNames, type Kind, type ConfigKey, type ConfigValue, type Setting } from '../kinds/index.js';
import { MODEL_SETTINGS } from './model-settings.js';
import { SERVER_SETTINGS } from './server-settings.js';
import { SESSION_SETTINGS } from './session-settings.js';
import { STORAGE_SETTINGS } from './storage-settings.js';

/**
 * Every setting of the daemon and of `sluice serve`/`acp`, each declared once in the file of its
 * topic (a provider's in the provider's file). Adding a flag is an entry there, then
 * `npm run docs:configuration` (docs/architecture.md).
 */
export const SETTINGS = {
  ...SERVER_SETTINGS,
  ...SESSION_SETTINGS,
  ...MODEL_SETTINGS,
  ...AGENT_SETTINGS,
  ...STORAGE_SETTINGS,
} as const;

type Table = typeof SETTINGS;
type CommandValue<S> = S extends { kind: Kind<infer C, infer _V> } ? C : never;
type HasDefault<S> = S extends { default: unknown } ? true : false;

/** The parsed options of a command (commander's attribute names), those with a default always set. */
export type CommandOptions<Scope extends Setting['scope']> = {
  [
    K in keyof Table as Table[K] extends { scope: Scope; flag: string }
      ? HasDefault<Table[K]> extends true
        ? K
        : never
      : never
  ]: CommandValue<Table[K]>;
} & {
  [
    K in keyof Table as Table[K] extends { scope: Scope; flag: string }
      ? HasDefault<Table[K]> extends true
        ? never
        : K
      : never
  ]?: CommandValue<Table[K]>;
};

/** The daemon's settings as a host passes them (`DaemonConfig`): every field optional. */
export type DaemonSettings = {
  -readonly [
    K in keyof Table as Table[K] extends { scope: 'daemon' } ? ConfigKey<K, Table[K]> : never
  ]?: ConfigValue<Table[K]>;
};

/** The `DaemonConfig` keys the daemon fills in when unset. */
export type DefaultedSetting = {
  [K in keyof Table]: Table[K] extends { scope: 'daemon'; default: unknown } ? ConfigKey<K, Table[K]> : never;
}[keyof Table];

/** The table as entries, for the code that walks it. */
export const SETTING_ENTRIES = Object.entries(SETTINGS) as Array<[string, Setting<unknown, unknown>]>;

/**
 * The variables that can hold a secret setting's value (the token, fleet URLs): the daemon
 * keeps them from the agent processes it starts.
 */
export const SECRET_VARIABLES: readonly string[] = SETTING_ENTRIES.flatMap(([, setting]) =>
  setting.secret === true ? variableNames(setting) : [],
);

/** `env` without the {@link SECRET_VARIABLES}: what an agent process may see. */
export function withoutSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept = { ...env };
  for (const name of SECRET_VARIABLES) delete kept[name];
  return kept;
}
