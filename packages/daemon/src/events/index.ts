export {
  EventBusError,
  EventNotSerializableError,
  InvalidLastEventIdError,
  InvalidMaxQueuedError,
  SubscriberLimitExceededError,
  type EventBusErrorCode,
} from './errors.js';
export {
  EVENT_ENVELOPE_VERSION,
  SYNTHETIC_EVENT_TYPES,
  formatSseFrame,
  syntheticFrame,
  type ClientEvictedData,
  type EventEnvelope,
  EventFrame,
  type ReplayCompleteData,
  type SlowClientWarningData,
  type StateResyncRequiredData,
  type SyntheticEventType,
} from './frames.js';
export {
  DEFAULT_MAX_QUEUED,
  DEFAULT_MAX_SUBSCRIBERS,
  DEFAULT_RING_SIZE,
  EventBus,
  MAX_MAX_QUEUED,
  MAX_RING_SIZE,
  MIN_MAX_QUEUED,
  type EventBusOptions,
  type PublishInput,
  type SubscribeOptions,
} from './event-bus.js';
export { EventMemory } from './event-memory.js';
export type { Subscription, SubscriptionEndReason } from './subscription.js';
export { SLOW_CLIENT_WARNING_RATIO, SLOW_CLIENT_REARM_RATIO } from './subscription.js';
export { parseLastEventId, parseMaxQueued } from './request-params.js';
