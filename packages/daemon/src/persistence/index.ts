export * from './errors.js';
export * from './session-store-schema.js';
export * from './sqlite-session-store.js';
