export type { ProviderEntry } from './provider.js';
export { PROVIDERS, PROVIDER_NAMES, loadProvider, type ProviderName } from './registry.js';
