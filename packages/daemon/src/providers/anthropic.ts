import { DEFAULT_ANTHROPIC_MAX_TOKENS } from '@sluice/runtime';
import { int, text } from '../kinds/index.js';
import { openai } from './openai.js';
import { defineProvider } from './provider.js';

/**
 * The Anthropic Messages API. `@sluice/runtime/anthropic` (the `@anthropic-ai/sdk`) is imported
 * only when a daemon starts with it. `--model` and `--base-url` are the OpenAI provider's
 * settings, shared: the one model and the one endpoint of the daemon.
 */
export const anthropic = defineProvider({
  settings: {
    model: openai.settings.model,
    baseUrl: openai.settings.baseUrl,
    anthropicApiKey: {
      topic: 'model provider',
      scope: 'daemon',
      kind: text({ nonEmpty: false }),
      defaultText: 'env ANTHROPIC_API_KEY',
      help: 'API key of the Anthropic endpoint (a host passes it; the CLI reads the variable)',
      fallbackEnv: [
        ['ANTHROPIC_API_KEY', 'API key --provider anthropic sends (none = no credential header)'],
      ],
    },
    anthropicMaxTokens: {
      flag: '--anthropic-max-tokens <n>',
      topic: 'model provider',
      scope: 'daemon',
      kind: int(1, { max: 1_000_000 }),
      default: DEFAULT_ANTHROPIC_MAX_TOKENS,
      help: 'max_tokens of an Anthropic call whose request sets no output bound (the API requires one)',
    },
  },
  hostPart: 'AnthropicProvider from @sluice/runtime/anthropic',
  missing: (config) =>
    config.model === undefined ? ['model', 'model is required with provider "anthropic"'] : undefined,
  load: async (config, warn) => {
    if (config.anthropicApiKey === undefined && !process.env['ANTHROPIC_API_KEY'])
      warn(
        `--provider anthropic: no API key (ANTHROPIC_API_KEY is unset), so no credential is sent to ${config.baseURL ?? process.env['ANTHROPIC_BASE_URL'] ?? 'https://api.anthropic.com'}; set ANTHROPIC_API_KEY unless the server needs none`,
      );
    const { AnthropicProvider } = await import('@sluice/runtime/anthropic');
    return new AnthropicProvider({
      model: config.model!,
      ...(config.baseURL === undefined ? {} : { baseURL: config.baseURL }),
      ...(config.anthropicApiKey === undefined ? {} : { apiKey: config.anthropicApiKey }),
      ...(config.anthropicMaxTokens === undefined ? {} : { maxTokens: config.anthropicMaxTokens }),
    });
  },
});
