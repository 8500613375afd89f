export * from './server.js';
export * from './error-map.js';
export * from './http-error.js';
export { isLoopbackHost, tokensEqual } from './security.js';
export { DEFAULT_SSE_HEARTBEAT_MS } from './sse-stream.js';
export { FEATURES } from './routes/discovery.js';
