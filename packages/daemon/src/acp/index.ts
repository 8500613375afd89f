export * from './acp-agent.js';
export * from './acp-link.js';
export * from './event-translation.js';
export * from './json-rpc-message.js';
export * from './outbound-merger.js';
export * from './rpc-errors.js';
export * from './stdio.js';
export * from './http/acp-http-registry.js';
