export { EchoProvider, estimateTokens, type EchoProviderOptions } from './echo-provider.js';
// The OpenAI-compatible and Anthropic providers are exported by `@sluice/runtime/openai` and
// `@sluice/runtime/anthropic` (src/openai.ts, src/anthropic.ts) only.
// The default `max_tokens` of the Anthropic provider, for hosts that state it without loading the SDK.
export { DEFAULT_ANTHROPIC_MAX_TOKENS } from './anthropic-wire.js';
