// The public face of @sluice/daemon: what a host needs to embed the daemon, plug in an agent or
// a session store, and read its errors. Folders reach each other through their own index.ts.
export {
  DaemonConfigError,
  resolveDaemonConfig,
  type DaemonConfig,
  type ResolvedDaemonConfig,
} from './config.js';
export { createDaemon, type Daemon, type DaemonParts, type DaemonStorage } from './daemon.js';
export {
  BODY_LIMIT_BYTES,
  FEATURES,
  buildServer,
  type FailureLog,
  type ServerOptions,
} from './http/index.js';
export { serveAcpStream, type AcpStreamServer, type AcpStreamServerOptions } from './acp/index.js';
export { ChatAgent, type ChatAgentOptions } from './agents/index.js';
export {
  EventBus,
  EventBusError,
  type EventBusErrorCode,
  type EventBusOptions,
  type EventEnvelope,
  type EventFrame,
  type Subscription,
} from './events/index.js';
export {
  PermissionBroker,
  PermissionError,
  withPermissions,
  type PermissionBrokerOptions,
  type PermissionErrorCode,
} from './permissions/index.js';
export {
  DaemonDrainingError,
  MemorySessionStore,
  PromptQueueFullError,
  SESSION_EVENT,
  SessionBridge,
  SessionBuses,
  SessionError,
  promptText,
  type Agent,
  type AgentTurn,
  type ContentBlock,
  type ConversationMessage,
  type PermissionOutcome,
  type PermissionRequest,
  type PromptAdmission,
  type SendPromptOptions,
  type SessionBridgeOptions,
  type SessionErrorCode,
  type SessionEvent,
  type SessionEventSink,
  type SessionHandle,
  type SessionRecord,
  type SessionStore,
  type SessionSummary,
  type SessionUpdate,
  type TurnFailure,
  type TurnResult,
} from './sessions/index.js';
