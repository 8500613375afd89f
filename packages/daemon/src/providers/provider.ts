import type { ModelProvider } from '@sluice/runtime';
import type { ConfigOf, SettingTable } from '../kinds/index.js';

/**
 * A model provider the daemon can be started with (`--provider <name>`): its own settings and
 * how to build it from their values (validated, defaults filled in). The registry (registry.ts) names each; everything else — the flag's choices,
 * the config's type and validation, the help — is derived from it.
 */
export interface ProviderEntry<S extends SettingTable = SettingTable> {
  /** Its own settings (model, base URL, …), listed under the "model provider" topic. */
  readonly settings: S;
  /** Builds it at once, for `createDaemon`; absent: it must be loaded ({@link load}) and passed in. */
  readonly create?: (config: ConfigOf<S>) => ModelProvider;
  /** Loads what it needs (an SDK imported only now) and builds it, warning of a doubtful setting. */
  readonly load: (config: ConfigOf<S>, warn: (message: string) => void) => Promise<ModelProvider>;
  /** What a host passes as `parts.provider` when there is no {@link create}. */
  readonly hostPart?: string;
  /** A setting it cannot run without: the setting and the message, or `undefined` when all are there. */
  readonly missing?: (config: ConfigOf<S>) => readonly [setting: string, message: string] | undefined;
}

/** Declares a provider, keeping its settings' types for the config's. */
export function defineProvider<const S extends SettingTable>(entry: ProviderEntry<S>): ProviderEntry<S> {
  return entry;
}
