import {
  ModelCatalogue,
  ModelRuntime,
  SharedModelRuntime,
  TotalSlotCap,
  type CapacityPort,
  type Job,
  type Journal,
  type ModelProvider,
  type SchedulerObserver,
} from '@sluice/runtime';
import { PROVIDERS, type ProviderEntry } from '../providers/index.js';
import { ModelTableError, type ModelSpec } from './model-spec.js';

/** What every model of a catalogue shares: the journal, the scheduler observer, a fleet's capacity. */
export interface SharedModelParts {
  journal: Journal;
  /** The observer of model `name`'s scheduler (the host's and the metrics' hooks). */
  observerOf?: (name: string) => SchedulerObserver | undefined;
  /** A fleet's shared limits (`--fleet-redis`): one pool, so a catalogue of one model only. */
  capacity?: CapacityPort<Job>;
  /** The daemon-wide cap on all models' executing calls (`--model-max-concurrency-total`). */
  maxConcurrencyTotal?: number | undefined;
}

/**
 * The providers of `specs` built at once (`create`), or those a host passes in catalogue order;
 * a provider that must be loaded (an SDK) and was not passed in is a {@link ModelTableError}.
 */
export function createProviders(
  specs: readonly ModelSpec[],
  given: readonly ModelProvider[] | undefined,
): ModelProvider[] {
  if (given !== undefined) {
    if (given.length !== specs.length)
      throw new ModelTableError(`${given.length} providers were passed for ${specs.length} models`);
    return [...given];
  }
  return specs.map((spec) => {
    const entry = PROVIDERS[spec.provider] as ProviderEntry;
    if (entry.create === undefined)
      throw new ModelTableError(
        `provider "${spec.provider}" must be passed in as parts.provider(s) (${entry.hostPart})`,
      );
    return entry.create(spec.providerConfig);
  });
}

/** Loads each model's provider (an SDK imported only now), in catalogue order. */
export function loadProviders(
  specs: readonly ModelSpec[],
  warn: (message: string) => void,
): Promise<ModelProvider[]> {
  return Promise.all(
    specs.map((spec) => (PROVIDERS[spec.provider] as ProviderEntry).load(spec.providerConfig, warn)),
  );
}

/** Whether any model's provider must be loaded rather than built at once. */
export function needsLoading(specs: readonly ModelSpec[]): boolean {
  return specs.some((spec) => (PROVIDERS[spec.provider] as ProviderEntry).create === undefined);
}

/** The cap shared by every model's scheduler, when one is set; a fleet's limits take no second one. */
function totalSlotCap(
  limit: number | undefined,
  capacity: CapacityPort<Job> | undefined,
): TotalSlotCap | undefined {
  if (limit === undefined) return undefined;
  if (capacity !== undefined)
    throw new ModelTableError(
      `modelMaxConcurrencyTotal (${limit}): a fleet's shared limits (--fleet-redis) already bound its one model; remove one of the two`,
    );
  return new TotalSlotCap(limit);
}

/**
 * One {@link ModelRuntime} per model — its own bounded scheduler with its limits, its provider —
 * over the one journal, as a {@link ModelCatalogue}. A model without a name takes its provider's
 * default model's.
 */
export function buildCatalogue(
  specs: readonly ModelSpec[],
  providers: readonly ModelProvider[],
  shared: SharedModelParts,
): ModelCatalogue {
  const { journal, observerOf, capacity } = shared;
  if (capacity !== undefined && specs.length > 1)
    throw new ModelTableError(
      `models: a fleet's shared limits (--fleet-redis) hold one model's pool; this catalogue has ${specs.length} models`,
    );
  const totalSlots = totalSlotCap(shared.maxConcurrencyTotal, capacity);
  const built: ModelRuntime[] = [];
  try {
    const models = specs.map((spec, index) => {
      const provider = providers[index]!;
      const name = spec.name ?? provider.defaultModel;
      const observer = observerOf?.(name);
      const options = {
        provider,
        journal,
        ...(observer === undefined ? {} : { observer }),
        scheduler: spec.limits,
        ...(totalSlots === undefined ? {} : { totalSlots }),
      };
      const runtime =
        capacity === undefined ? new ModelRuntime(options) : new SharedModelRuntime({ ...options, capacity });
      built.push(runtime);
      return {
        name,
        runtime,
        aliases: spec.aliases,
        fallbacks: spec.fallbacks,
      };
    });
    return new ModelCatalogue(models);
  } catch (error) {
    for (const runtime of built) void runtime.shutdown().catch(() => {});
    throw error;
  }
}
