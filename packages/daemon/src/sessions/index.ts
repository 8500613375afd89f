export * from './agent.js';
export * from './clients.js';
export * from './conversation.js';
export * from './errors.js';
export * from './options.js';
export type { BranchedSession, PromptResult } from './queue-items.js';
export * from './session-bridge.js';
export * from './session-events.js';
export * from './session-store.js';
