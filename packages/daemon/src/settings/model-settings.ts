import { DEFAULT_MAX_WAITING, DEFAULT_SCHEDULER_LIMITS, MAX_TIMER_MS } from '@sluice/runtime';
import { DEFAULT_CONTEXT_MAX_BYTES } from '../defaults.js';
import { PROVIDER_SETTINGS, providerSetting } from '../providers/index.js';
import { int, modelTables, type SettingTable } from '../kinds/index.js';

const limits = DEFAULT_SCHEDULER_LIMITS;

/** The model scheduler's limits (applied by the scheduler when unset), and the provider behind it. */
export const MODEL_SETTINGS = {
  modelMaxConcurrency: {
    flag: '--model-max-concurrency <n>',
    topic: 'model scheduler',
    scope: 'daemon',
    kind: int(1),
    defaultText: String(limits.maxConcurrency),
    help: 'model calls executing at once',
  },
  modelMaxConcurrencyTotal: {
    flag: '--model-max-concurrency-total <n>',
    topic: 'model scheduler',
    scope: 'daemon',
    kind: int(1),
    defaultText: 'none',
    help: "model calls executing at once over all the catalogue's models together (docs/decisions/037); each model's own limits still apply; unset: no cap beyond them",
  },
  modelMaxQueued: {
    flag: '--model-max-queued <n>',
    topic: 'model scheduler',
    scope: 'daemon',
    kind: int(0),
    defaultText: String(limits.maxQueued),
    help: 'model calls waiting for a slot',
  },
  modelMaxWaiting: {
    flag: '--model-max-waiting <n>',
    topic: 'model scheduler',
    scope: 'daemon',
    kind: int(0),
    defaultText: String(DEFAULT_MAX_WAITING),
    help: 'model calls of accepted prompts waiting, in order, for room when the queue or the in-flight cap is full (docs/decisions/029); 0 refuses them',
  },
  modelMaxInflight: {
    flag: '--model-max-inflight <n>',
    topic: 'model scheduler',
    scope: 'daemon',
    kind: int(1),
    defaultText: `${limits.maxInflight}, at least --model-max-concurrency`,
    help: 'model calls accepted and not yet cleaned up',
  },
  modelMaxRequestBytes: {
    flag: '--model-max-request-bytes <n>',
    topic: 'model scheduler',
    scope: 'daemon',
    kind: int(1),
    defaultText: String(limits.maxRequestBytes),
    help: 'largest model request in bytes',
  },
  modelTimeoutMs: {
    flag: '--model-timeout-ms <ms>',
    topic: 'model scheduler',
    scope: 'daemon',
    kind: int(1, { max: MAX_TIMER_MS }),
    defaultText: String(limits.defaultTimeoutMs),
    help: 'default model call timeout',
  },
  models: {
    flag: '--models <json>',
    topic: 'model provider',
    scope: 'daemon',
    kind: modelTables,
    help: 'the model catalogue: [[model]] tables in the config file (docs/models.md), or their JSON array; each model its own limits (the --model-* flags are their defaults) and fallbacks; replaces --provider, --model and --base-url',
  },
  provider: providerSetting,
  ...PROVIDER_SETTINGS,
  contextMaxBytes: {
    flag: '--context-max-bytes <n>',
    topic: 'agents',
    scope: 'daemon',
    kind: int(0),
    default: DEFAULT_CONTEXT_MAX_BYTES,
    help: 'bytes of conversation history the built-in agent sends with each turn, newest first',
  },
} as const satisfies SettingTable;
