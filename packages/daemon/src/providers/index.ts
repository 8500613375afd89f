export { defineProvider, type ProviderEntry } from './provider.js';
export {
  PROVIDERS,
  PROVIDER_NAMES,
  PROVIDER_SETTINGS,
  providerSetting,
  type ProviderName,
  type ProviderSettings,
} from './registry.js';
