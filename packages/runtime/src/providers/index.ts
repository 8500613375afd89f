export { EchoProvider, estimateTokens, type EchoProviderOptions } from './echo-provider.js';
// The OpenAI-compatible provider is exported by `@sluice/runtime/openai` (src/openai.ts) only.
