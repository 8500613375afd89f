export { BODY_LIMIT_BYTES, buildServer, type FailureLog, type ServerOptions } from './server.js';
export { isLoopbackHost, tokensEqual } from './security.js';
export { FEATURES } from './routes/discovery.js';
export type { RateLimitOptions } from './rate-limit.js';
