export { DaemonClient } from './daemon-client.js';
export type { DaemonClientOptions } from './daemon-client.js';
export type { PromptRequest } from './prompt-post.js';
export type { BranchSessionRequest, CreateSessionRequest, RestoreSessionRequest } from './requests.js';
export { DaemonSessionClient } from './daemon-session-client.js';
export type {
  DaemonSessionClientOptions,
  DaemonSessionSubscribeOptions,
  SessionClientFactoryOptions,
  RestoreArgs,
} from './daemon-session-client.js';
export {
  DaemonHttpError,
  DaemonPendingPromptLimitError,
  DaemonPromptLostError,
  DaemonProtocolError,
  DaemonStreamEndedError,
  DaemonTurnError,
  isDaemonTurnError,
} from './errors.js';
export type { DaemonEvent, ReconnectOptions, SubscribeOptions } from './events.js';
export type { FetchLike } from './http.js';
export {
  DEFAULT_FETCH_TIMEOUT_MS,
  DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION,
  DEFAULT_RECONNECT,
} from './defaults.js';
export { matchTurnEvent } from './turn.js';
export { withRetry } from './with-retry.js';
export type { RetryOptions } from './with-retry.js';
export type {
  BranchedSessionHandle,
  Capabilities,
  EventEnvelope,
  PendingPrompt,
  PendingPromptsResponse,
  PermissionVote,
  PromptAccepted,
  PromptContentBlock,
  PromptResult,
  RemovePendingPromptResponse,
  RestoredSessionHandle,
  SessionHandle,
  SessionSummary,
} from '@sluice/protocol';
