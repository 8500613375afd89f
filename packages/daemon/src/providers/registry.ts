import type { ModelProvider } from '@sluice/runtime';
import type { DaemonConfig } from '../config.js';
import { oneOf } from '../kinds/index.js';
import { anthropic } from './anthropic.js';
import { echo } from './echo.js';
import { openai } from './openai.js';
import type { ProviderEntry } from './provider.js';

/**
 * The model providers by name, the first the default. Adding one is a file that declares it
 * (its settings, how to build it) and a line here; `--provider`'s choices, the config's type,
 * its validation and the help follow (docs/decisions/026).
 */
export const PROVIDERS = {
  echo,
  openai,
  anthropic,
} as const;

export type ProviderName = keyof typeof PROVIDERS;

type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** Every provider's own settings, as one table. */
export type ProviderSettings = Intersection<(typeof PROVIDERS)[ProviderName]['settings']>;

export const PROVIDER_NAMES = Object.keys(PROVIDERS) as ProviderName[];

/** The settings of every provider, merged (a setting two providers share is declared by the first). */
export const PROVIDER_SETTINGS = Object.assign(
  {},
  ...Object.values(PROVIDERS).map((entry: ProviderEntry) => entry.settings),
) as ProviderSettings;

/** `--provider`: which entry of {@link PROVIDERS} builds the model provider. */
export const providerSetting = {
  flag: '--provider <name>',
  topic: 'model provider',
  scope: 'daemon',
  kind: oneOf(PROVIDER_NAMES),
  default: PROVIDER_NAMES[0]!,
  help: 'model provider',
} as const;

/** The provider `config` names, loaded (its SDK imported only now) and built. */
export function loadProvider(
  config: DaemonConfig & { provider: ProviderName },
  warn: (message: string) => void,
): Promise<ModelProvider> {
  return (PROVIDERS[config.provider] as ProviderEntry).load(config, warn);
}
