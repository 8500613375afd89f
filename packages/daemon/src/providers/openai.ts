import { httpUrl, text } from '../kinds/index.js';
import { defineProvider } from './provider.js';

/**
 * An OpenAI-compatible endpoint. `@sluice/runtime/openai` (the `openai` SDK, ~150 modules) is
 * imported only when a daemon starts with it, so a default start never loads the SDK.
 */
export const openai = defineProvider({
  settings: {
    model: {
      flag: '--model <name>',
      topic: 'model provider',
      scope: 'daemon',
      kind: text(),
      help: 'model name (required for openai and anthropic)',
    },
    baseUrl: {
      flag: '--base-url <url>',
      topic: 'model provider',
      scope: 'daemon',
      config: 'baseURL',
      kind: httpUrl,
      defaultText: "env OPENAI_BASE_URL or ANTHROPIC_BASE_URL, then the provider's public API",
      help: 'base URL of the provider: OpenAI-compatible including /v1; Anthropic without /v1',
      fallbackEnv: [
        ['OPENAI_BASE_URL', 'base URL of --provider openai when --base-url is not given'],
        ['ANTHROPIC_BASE_URL', 'base URL of --provider anthropic when --base-url is not given'],
      ],
    },
    apiKey: {
      topic: 'model provider',
      scope: 'daemon',
      kind: text({ nonEmpty: false }),
      defaultText: 'env OPENAI_API_KEY',
      help: 'API key of the OpenAI-compatible endpoint (a host passes it; the CLI reads the variable)',
      fallbackEnv: [['OPENAI_API_KEY', 'API key --provider openai sends (none = no Authorization header)']],
    },
  },
  hostPart: 'OpenAIProvider from @sluice/runtime/openai',
  missing: (config) =>
    config.model === undefined ? ['model', 'model is required with provider "openai"'] : undefined,
  load: async (config, warn) => {
    if (config.apiKey === undefined && !process.env['OPENAI_API_KEY'])
      warn(
        `--provider openai: no API key (OPENAI_API_KEY is unset), so no Authorization header is sent to ${config.baseURL ?? process.env['OPENAI_BASE_URL'] ?? 'https://api.openai.com/v1'}; set OPENAI_API_KEY unless the server needs none`,
      );
    const { OpenAIProvider } = await import('@sluice/runtime/openai');
    return new OpenAIProvider({
      model: config.model!,
      ...(config.baseURL === undefined ? {} : { baseURL: config.baseURL }),
      ...(config.apiKey === undefined ? {} : { apiKey: config.apiKey }),
    });
  },
});
