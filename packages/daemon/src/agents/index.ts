export { ChatAgent, type ChatAgentOptions } from './chat-agent.js';
// The external ACP agents' public face is its folder's index, whole.
export * from './acp/index.js';
