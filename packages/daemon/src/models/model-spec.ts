import type { SchedulerConfig } from '@sluice/runtime';
import type { ProviderName } from '../providers/index.js';

/** One model of the catalogue as the configuration declares it, validated (issue 29). */
export interface ModelSpec {
  /** The name clients use; absent for the flag form, where the provider's default model names it. */
  name: string | undefined;
  provider: ProviderName;
  /** What the provider entry builds it from: its own settings (`model`, `baseURL`, `apiKey`, …). */
  providerConfig: Record<string, unknown>;
  /** Its own scheduler's limits (SCH-3); unset members take the `--model-*` flags, then the defaults. */
  limits: SchedulerConfig;
  aliases: string[];
  fallbacks: string[];
}

/** A `[[model]]` table (or `--models` entry) that breaks a rule; the message names the key and value. */
export class ModelTableError extends Error {
  override readonly name = 'ModelTableError';
}
