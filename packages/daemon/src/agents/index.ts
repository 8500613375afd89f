export { ChatAgent, type ChatAgentOptions } from './chat-agent.js';
