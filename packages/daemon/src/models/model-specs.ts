import type { SchedulerConfig } from '@sluice/runtime';
import type { DaemonConfig } from '../config.js';
import { PROVIDER_NAMES, type ProviderName } from '../providers/index.js';
import { ModelTableError, type ModelSpec } from './model-spec.js';
import { readModelTables, type KeySources } from './model-table.js';

/** Settings of the flag form, which `[[model]]` tables replace: giving both is a mistake. */
const FLAG_FORM = ['model', 'baseURL'] as const;

/**
 * The catalogue the configuration declares: its `[[model]]` tables (`models`), or the flag form —
 * `--provider`, `--model`, `--base-url` — as a one-model catalogue named by the provider's
 * default model. Each model's unset limits take the `--model-*` flags, then the scheduler's
 * defaults. Throws {@link ModelTableError} naming a bad table, key and value.
 */
export function modelSpecs(config: DaemonConfig, keys?: KeySources): ModelSpec[] {
  if (config.models === undefined) {
    const spec: ModelSpec = {
      name: undefined,
      provider: (config.provider ?? PROVIDER_NAMES[0]) as ProviderName,
      providerConfig: config as Record<string, unknown>,
      limits: {},
      aliases: [],
      fallbacks: [],
    };
    return [withDefaults(spec, config)];
  }
  return readModelTables(config.models, keys).map((spec) => withDefaults(spec, config));
}

/** Refuses the flag form's settings beside `[[model]]` tables, naming the first one given. */
export function refuseMixedForms(config: DaemonConfig): void {
  if (config.models === undefined) return;
  const provider =
    config.provider !== undefined && config.provider !== PROVIDER_NAMES[0] ? 'provider' : undefined;
  const given = provider ?? FLAG_FORM.find((setting) => config[setting] !== undefined);
  if (given !== undefined)
    throw new ModelTableError(
      `models: [[model]] tables declare each model's provider, model and key; remove ${given} (or the tables)`,
    );
}

function withDefaults(spec: ModelSpec, config: DaemonConfig): ModelSpec {
  const own = spec.limits;
  const maxConcurrency = own.maxConcurrency ?? config.modelMaxConcurrency;
  const limits: SchedulerConfig = {
    maxConcurrency,
    maxQueued: own.maxQueued ?? config.modelMaxQueued,
    maxWaiting: own.maxWaiting ?? config.modelMaxWaiting,
    maxInflight: own.maxInflight ?? config.modelMaxInflight ?? Math.max(64, maxConcurrency ?? 4),
    maxRequestBytes: own.maxRequestBytes ?? config.modelMaxRequestBytes,
    defaultTimeoutMs: own.defaultTimeoutMs ?? config.modelTimeoutMs,
  };
  if (limits.maxInflight! < (maxConcurrency ?? 4))
    throw new ModelTableError(
      `${spec.name ?? 'model'}: maxInflight (${limits.maxInflight}) must be at least maxConcurrency (${maxConcurrency})`,
    );
  return { ...spec, limits };
}
