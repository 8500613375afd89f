export { EchoProvider, estimateTokens, type EchoProviderOptions } from './echo-provider.js';
export { OpenAIProvider, ProviderError, type OpenAIProviderOptions } from './openai-provider.js';
