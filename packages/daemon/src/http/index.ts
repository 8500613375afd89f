export { BODY_LIMIT_BYTES, buildServer, type FailureLog, type ServerOptions } from './server.js';
export { isLoopbackHost, tokensEqual } from './security.js';
export { FEATURES } from './routes/discovery.js';
export { listenAgentGateway, type AgentGatewayListener } from './agent-gateway-listener.js';
export type { RateLimitOptions } from './rate-limit.js';
