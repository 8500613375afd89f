export * from './model.js';
export * from './errors.js';
export * from './wire.js';
