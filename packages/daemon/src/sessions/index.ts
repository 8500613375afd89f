export { SessionBridge, type BridgeLimits, type HeartbeatResult } from './session-bridge.js';
export type { PromptAdmission, SendPromptOptions } from './admission.js';
export type { BranchSessionOptions } from './branching.js';
export { MAX_BRANCH_NAME_CHARS } from './branching.js';
export { MAX_IDEMPOTENCY_KEY_CHARS, MAX_IDEMPOTENCY_KEYS_PER_SESSION } from './idempotency.js';
export type {
  CloseSessionOptions,
  CreateSessionRequest,
  RestoreSessionOptions,
} from './session-directory.js';
export type { SessionHandle, SessionSummary } from './session.js';
export type { SessionSummaryPage } from './session-lists.js';
export type { BranchedSession, PendingPromptInfo, PromptResult } from './queue-items.js';
export {
  promptText,
  type Agent,
  type AgentHost,
  type AgentSessionStart,
  type AgentTurn,
  type ContentBlock,
  type ConversationMessage,
  type PermissionOption,
  type PermissionOptionKind,
  type PermissionOutcome,
  type PermissionRequest,
  type SessionUpdate,
  type StopReason,
  type TurnResult,
} from './agent.js';
export { CLIENT_ID_PATTERN, assertClientIdFormat } from './clients.js';
export { ConversationLog, isConversationMessage } from './conversation.js';
export {
  BranchWhilePromptActiveError,
  BridgeShuttingDownError,
  DaemonDrainingError,
  IdempotencyKeyReusedError,
  InvalidBranchNameError,
  InvalidIdempotencyKeyError,
  InvalidClientIdError,
  InvalidCwdError,
  InvalidDeadlineError,
  InvalidPromptError,
  InvalidSessionCursorError,
  InvalidSessionIdError,
  InvalidSessionScopeError,
  InvalidTurnResultError,
  PromptAbortedError,
  PromptDeadlineExceededError,
  PromptQueueFullError,
  SessionClosedError,
  SessionClosingError,
  SessionError,
  SessionIdConflictError,
  SessionLimitExceededError,
  SessionNotFoundError,
  SessionOwnedElsewhereError,
  SessionWorkspaceConflictError,
  UnknownAgentError,
  WorkspaceMismatchError,
  type SessionErrorCode,
} from './errors.js';
export {
  DEFAULT_MAX_CLIENTS_PER_SESSION,
  DEFAULT_MAX_CONVERSATION_BYTES,
  DEFAULT_MAX_CONVERSATION_MESSAGES,
  DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MAX_SESSIONS_PER_WORKSPACE,
  MAX_TERMINAL_EVENT_DELAY_MS,
  pendingPromptLimit,
  type AdmissionObserver,
  type SessionBridgeOptions,
  type TurnFailure,
} from './options.js';
export {
  DEFAULT_CLOSED_BUS_RETENTION,
  SessionBuses,
  type ClosedBusRetention,
  type StreamPosition,
} from './session-buses.js';
export {
  SESSION_EVENT,
  TERMINAL_EVENT_TYPES,
  type SessionEvent,
  type SessionEventSink,
} from './session-events.js';
export {
  DEFAULT_SESSION_LIST_SIZE,
  MAX_SESSION_LIST_SIZE,
  compareListPosition,
  decodeListCursor,
  encodeListCursor,
  listPageSize,
  type ListPosition,
} from './session-listing.js';
// The store contract (docs/decisions/028), for the daemon's folders and its stores.
export type {
  AcceptedPrompt,
  AdmissionLedgerStore,
  SessionListOptions,
  SessionListPage,
  SessionOwner,
  SessionRecord,
  SessionScope,
  SessionStore,
  SettledPrompt,
  StoredSessionSummary,
} from '@sluice/store';
export { DEFAULT_MEMORY_STORE_MAX_RECORDS, MemorySessionStore } from './memory-session-store.js';
