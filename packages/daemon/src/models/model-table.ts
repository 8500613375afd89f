import { readFileSync } from 'node:fs';
import { describeValue } from '@sluice/protocol';
import { PROVIDERS, PROVIDER_NAMES, type ProviderEntry, type ProviderName } from '../providers/index.js';
import { int, type Kind } from '../kinds/index.js';
import { MAX_TIMER_MS, type SchedulerConfig } from '@sluice/runtime';
import { ModelTableError, type ModelSpec } from './model-spec.js';

/** A model name or alias: what a client may write as `"model"` (`gpt-4o`, `qwen/qwen3:8b`). */
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,127}$/;

/** A table's scheduler limits, each with its kind and the `SchedulerConfig` member it sets. */
const LIMITS: ReadonlyArray<readonly [key: string, kind: Kind<number>, member: keyof SchedulerConfig]> = [
  ['maxConcurrency', int(1), 'maxConcurrency'],
  ['maxQueued', int(0), 'maxQueued'],
  ['maxWaiting', int(0), 'maxWaiting'],
  ['maxInflight', int(1), 'maxInflight'],
  ['maxRequestBytes', int(1), 'maxRequestBytes'],
  ['timeoutMs', int(1, { max: MAX_TIMER_MS }), 'defaultTimeoutMs'],
];

/** The keys of a table besides the limits and the provider's own settings. */
const OWN_KEYS = new Set([
  'name',
  'provider',
  'model',
  'baseUrl',
  'apiKeyEnv',
  'apiKeyFile',
  'fallbacks',
  'aliases',
]);
/** Provider settings a table sets through its own keys (`model`, `baseUrl`, the key's source). */
const MAPPED_PROVIDER_KEYS = new Set(['model', 'baseURL', 'apiKey']);

/** Where a table reads its key from: the environment and files, injectable for tests. */
export interface KeySources {
  env: NodeJS.ProcessEnv;
  readFile: (path: string) => string;
}

const SYSTEM_KEYS: KeySources = { env: process.env, readFile: (path) => readFileSync(path, 'utf8') };

/**
 * Reads `[[model]]` tables into specs, refusing a bad one with a {@link ModelTableError} that
 * names the table (`models[1] ("fast")`), the key and the value. A key is never in the table:
 * `apiKeyEnv` names a variable, `apiKeyFile` a file, read now.
 */
export function readModelTables(tables: unknown, keys: KeySources = SYSTEM_KEYS): ModelSpec[] {
  if (!Array.isArray(tables) || tables.length === 0)
    throw new ModelTableError(
      `models must be a non-empty array of model tables, got ${describeValue(tables)}`,
    );
  const specs = tables.map((table: unknown, index) => readTable(table, `models[${index}]`, keys));
  checkNames(specs);
  return specs;
}

function readTable(table: unknown, at: string, keys: KeySources): ModelSpec {
  if (typeof table !== 'object' || table === null || Array.isArray(table))
    throw new ModelTableError(
      `${at}: must be a table of name, provider, model, …, got ${describeValue(table)}`,
    );
  const fields = table as Record<string, unknown>;
  const name = fields['name'];
  if (typeof name !== 'string' || !MODEL_NAME.test(name))
    throw refuse(`${at}.name`, 'must be a model name: letters, digits and _ . : / @ + -, at most 128', name);
  const where = `${at} (${JSON.stringify(name)})`;
  const provider = fields['provider'] ?? PROVIDER_NAMES[0];
  if (typeof provider !== 'string' || !(PROVIDER_NAMES as string[]).includes(provider))
    throw refuse(`${where}.provider`, `must be one of ${PROVIDER_NAMES.join(', ')}`, provider);
  const entry = PROVIDERS[provider as ProviderName] as ProviderEntry;
  const providerConfig = providerConfigOf(fields, entry, where, keys);
  const missing = entry.missing?.(providerConfig);
  if (missing !== undefined) throw new ModelTableError(`${where}: ${missing[1]}`);
  return {
    name,
    provider: provider as ProviderName,
    providerConfig,
    limits: limitsOf(fields, where),
    aliases: namesOf(fields['aliases'], `${where}.aliases`),
    fallbacks: namesOf(fields['fallbacks'], `${where}.fallbacks`),
  };
}

/** The provider's settings from the table: `model`, `baseUrl`, the key, and its own keys by name. */
function providerConfigOf(
  fields: Record<string, unknown>,
  entry: ProviderEntry,
  where: string,
  keys: KeySources,
): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  const own = new Map(
    Object.entries(entry.settings)
      .map(([key, setting]) => [setting.config ?? key, setting] as const)
      .filter(([key]) => !MAPPED_PROVIDER_KEYS.has(key)),
  );
  for (const [key, value] of Object.entries(fields)) {
    if (key === 'apiKey')
      throw new ModelTableError(
        `${where}.apiKey: a key is never written in the config; name its variable (apiKeyEnv) or its file (apiKeyFile)`,
      );
    const setting = own.get(key);
    if (setting !== undefined) {
      const reason = setting.kind.violation(value);
      if (reason !== undefined) throw refuse(`${where}.${key}`, reason, value);
      config[key] = value;
    } else if (!OWN_KEYS.has(key) && !LIMITS.some(([limit]) => limit === key))
      throw refuse(
        `${where}.${key}`,
        `unknown key; a model has ${[...OWN_KEYS, ...LIMITS.map(([k]) => k), ...own.keys()].join(', ')}`,
        value,
      );
  }
  for (const [key, target] of [
    ['model', 'model'],
    ['baseUrl', 'baseURL'],
  ] as const) {
    const value = fields[key];
    if (value === undefined) continue;
    const setting = entry.settings[target] ?? Object.values(entry.settings).find((s) => s.config === target);
    if (setting === undefined) throw refuse(`${where}.${key}`, `provider has no ${key}`, value);
    const reason = setting.kind.violation(value);
    if (reason !== undefined) throw refuse(`${where}.${key}`, reason, value);
    config[target] = value;
  }
  const apiKey = keyOf(fields, where, keys);
  if (apiKey !== undefined) config['apiKey'] = apiKey;
  return config;
}

/** The key the table names: from its variable or its file, which must be there and non-empty. */
function keyOf(
  fields: Record<string, unknown>,
  where: string,
  { env, readFile }: KeySources,
): string | undefined {
  const variable = fields['apiKeyEnv'];
  const file = fields['apiKeyFile'];
  if (variable !== undefined && file !== undefined)
    throw new ModelTableError(`${where}: give apiKeyEnv or apiKeyFile, not both`);
  if (variable !== undefined) {
    if (typeof variable !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable))
      throw refuse(`${where}.apiKeyEnv`, 'must be the name of an environment variable', variable);
    const value = env[variable]?.trim();
    if (!value) throw new ModelTableError(`${where}.apiKeyEnv: the variable ${variable} is unset or empty`);
    return value;
  }
  if (file === undefined) return undefined;
  if (typeof file !== 'string' || file === '')
    throw refuse(`${where}.apiKeyFile`, 'must be a file path', file);
  let text: string;
  try {
    text = readFile(file);
  } catch (error) {
    throw new ModelTableError(`${where}.apiKeyFile: cannot read ${file}: ${(error as Error).message}`);
  }
  const value = text.trim();
  if (value === '') throw new ModelTableError(`${where}.apiKeyFile: ${file} is empty`);
  return value;
}

function limitsOf(fields: Record<string, unknown>, where: string): SchedulerConfig {
  const limits: SchedulerConfig = {};
  for (const [key, kind, member] of LIMITS) {
    const value = fields[key];
    if (value === undefined) continue;
    const reason = kind.violation(value);
    if (reason !== undefined) throw refuse(`${where}.${key}`, reason, value);
    limits[member] = value as number;
  }
  if (limits.maxInflight !== undefined && limits.maxInflight < (limits.maxConcurrency ?? 1))
    throw refuse(
      `${where}.maxInflight`,
      `must be at least maxConcurrency (${limits.maxConcurrency ?? 1})`,
      limits.maxInflight,
    );
  return limits;
}

function namesOf(value: unknown, at: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((name) => typeof name !== 'string' || !MODEL_NAME.test(name)))
    throw refuse(at, 'must be an array of model names', value);
  if (new Set(value).size !== value.length) throw refuse(at, 'names a model twice', value);
  return value as string[];
}

/** Names and aliases are unique; fallbacks name models of the catalogue, never their own. */
function checkNames(specs: readonly ModelSpec[]): void {
  const owner = new Map<string, string>();
  specs.forEach((spec, index) => {
    for (const name of [spec.name!, ...spec.aliases]) {
      const first = owner.get(name);
      if (first !== undefined)
        throw new ModelTableError(
          `models[${index}] (${JSON.stringify(spec.name)}): the name ${JSON.stringify(name)} is already ${first}'s`,
        );
      owner.set(name, spec.name!);
    }
  });
  specs.forEach((spec, index) => {
    for (const fallback of spec.fallbacks) {
      const target = owner.get(fallback);
      const where = `models[${index}] (${JSON.stringify(spec.name)}).fallbacks`;
      if (target === undefined)
        throw refuse(
          where,
          `names ${JSON.stringify(fallback)}, which is no model of the catalogue`,
          spec.fallbacks,
        );
      if (target === spec.name) throw refuse(where, 'names the model itself', spec.fallbacks);
    }
  });
}

function refuse(at: string, reason: string, value: unknown): ModelTableError {
  return new ModelTableError(`${at}: ${reason} (got ${describeValue(value)})`);
}
