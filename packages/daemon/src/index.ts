export * from './events/index.js';
export * from './sessions/index.js';
export * from './permissions/index.js';
export * from './acp/index.js';
export * from './persistence/index.js';
export * from './agents/index.js';
export * from './http/index.js';
export * from './daemon.js';
