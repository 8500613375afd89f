export { DESCRIBED_VALUE_MAX_CHARS, clipText, describeValue } from './describe-value.js';
export {
  integerInRange,
  invalidValue,
  nonNegativeFiniteNumber,
  nonNegativeInteger,
  positiveFiniteNumber,
  positiveInteger,
  positiveIntegerOrInfinity,
  type InvalidValueError,
} from './validate.js';
export { DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION, MAX_TIMER_MS, SSE_HEARTBEAT_MS } from './limits.js';
export {
  MODEL_ERROR_CODES,
  type FleetCapacityReport,
  type TotalSlotsReport,
  type ModelErrorCode,
  type ModelJobPhase,
  type ModelJobReport,
  type ModelLimits,
  type ModelSchedulerSnapshot,
  type ModelStopReason,
  type OverloadCapacity,
} from './model.js';
export { SluiceError, type SluiceErrorOptions } from './errors.js';
export { CataloguedError, CodedError } from './catalogued-error.js';
export { ERROR_CATALOGUE, type CodesOf, type WireErrorCode, type WireForm } from './error-catalogue.js';
export { REGENERATE_ERROR_REFERENCE, renderErrorReference } from './error-reference.js';
export {
  CLIENT_ID_HEADER,
  EVENT_EPOCH_HEADER,
  EVENT_TYPES,
  PERMISSION_NOT_FOUND_CODE,
  SSE_STREAM_ID_HEADER,
  type BranchedSessionHandle,
  type Capabilities,
  type CapabilityLimits,
  type ClientEvictedData,
  type CreateSessionBody,
  type EventEnvelope,
  type HeartbeatResponse,
  type PendingPrompt,
  type PendingPromptsResponse,
  type PermissionVote,
  type PromptAccepted,
  type PromptBody,
  type PromptContentBlock,
  type PromptQueueFullBody,
  type PromptResult,
  type RemovePendingPromptResponse,
  type ReplayCompleteData,
  type RestoredSessionHandle,
  type SessionHandle,
  type SessionListPage,
  type SessionSummary,
  type StateResyncRequiredData,
  type TurnCompleteData,
  type TurnErrorData,
  type WireErrorBody,
} from './wire.js';
