export { EchoProvider, estimateTokens, type EchoProviderOptions } from './echo-provider.js';
// The OpenAI-compatible and Anthropic providers are exported by `@sluice/runtime/openai` and
// `@sluice/runtime/anthropic` (src/openai.ts, src/anthropic.ts) only.
