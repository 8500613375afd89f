export * from './chat-agent.js';
