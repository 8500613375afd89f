import { CataloguedError, describeValue, type CodesOf } from '@sluice/protocol';
/** Stable codes of the event bus's errors; their wire forms are in @sluice/protocol's catalogue. */
export type EventBusErrorCode = CodesOf<
  'invalid_max_queued' | 'invalid_last_event_id' | 'subscriber_limit_exceeded' | 'event_not_serializable'
>;

/** Base of every error the event bus throws: a stable `code`, never a message to match. */
export abstract class EventBusError extends CataloguedError<EventBusErrorCode> {}

/** `maxQueued` of a subscription is not an integer in [min, max] (HTTP `400 invalid_max_queued`). */
export class InvalidMaxQueuedError extends EventBusError {
  readonly code = 'invalid_max_queued';
  constructor(
    readonly value: unknown,
    readonly min: number,
    readonly max: number,
  ) {
    super(`maxQueued must be an integer in [${min}, ${max}], got ${describeValue(value)}`);
  }
}

/** `lastEventId` of a subscription is not a non-negative integer. */
export class InvalidLastEventIdError extends EventBusError {
  readonly code = 'invalid_last_event_id';
  constructor(readonly value: unknown) {
    super(`lastEventId must be a non-negative integer, got ${describeValue(value)}`);
  }
}

/** The bus already holds `limit` subscriptions (HTTP `429 subscriber_limit_exceeded`). */
export class SubscriberLimitExceededError extends EventBusError {
  readonly code = 'subscriber_limit_exceeded';
  constructor(readonly limit: number) {
    super(`Too many event subscribers for this session (limit ${limit})`);
  }
}

/** A published event cannot be written as JSON (a BigInt, a cycle); nothing was published. */
export class EventNotSerializableError extends EventBusError {
  readonly code = 'event_not_serializable';
  constructor(
    readonly type: string,
    cause: unknown,
  ) {
    super(`Event "${type}" cannot be serialized as JSON: ${String(cause)}`, { cause });
  }
}
