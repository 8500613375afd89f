export * from './events/index.js';
export * from './sessions/index.js';
export * from './persistence/index.js';
