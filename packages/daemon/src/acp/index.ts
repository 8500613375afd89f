export type { AcpDaemon } from './acp-daemon.js';
export { ACP_LIST_PAGE_SIZE, ACP_PROTOCOL_VERSION, buildAcpAgent, type AcpSessionHost } from './acp-agent.js';
export { AcpLink, type AcpLinkOptions, type AcpReceipt, type AcpRoute } from './acp-link.js';
export { QWEN_NOTIFY, eventToAcpMessage } from './event-translation.js';
export { RPC_CODE, isUntypedFailure, toRequestError } from './rpc-errors.js';
export {
  DEFAULT_MAX_STDIO_OUTSTANDING,
  serveAcpStream,
  type AcpStreamServer,
  type AcpStreamServerOptions,
} from './stdio.js';
export {
  DEFAULT_ACP_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_ACP_CONNECTIONS,
  DEFAULT_MAX_ACP_OUTSTANDING,
  DEFAULT_MAX_ACP_SESSION_STREAMS,
  AcpHttpRegistry,
  type AcpHttpRegistryOptions,
} from './http/acp-http-registry.js';
export type { AcpHttpHandlers } from './http/acp-http-handlers.js';
