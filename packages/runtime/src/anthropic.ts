// `@sluice/runtime/anthropic`: the Anthropic Messages provider on a subpath of its own, so that
// the main entry does not load `@anthropic-ai/sdk` for hosts that never use it.
export { ProviderError, type UpstreamError } from './errors.js';
export { AnthropicProvider, type AnthropicProviderOptions } from './providers/anthropic-provider.js';
export { DEFAULT_ANTHROPIC_MAX_TOKENS } from './providers/anthropic-wire.js';
