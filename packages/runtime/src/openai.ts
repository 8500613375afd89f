// `@sluice/runtime/openai`: the OpenAI-compatible provider on a subpath of its own, so that the
// main entry does not load the `openai` SDK (about 150 modules) for hosts that never use it.
export { ProviderError, type UpstreamError } from './errors.js';
export { OpenAIProvider, type OpenAIProviderOptions } from './providers/openai-provider.js';
