import { CataloguedError, describeValue, type CodesOf } from '@sluice/protocol';

/** Stable codes of the permission broker's errors; their wire forms are in @sluice/protocol's catalogue. */
export type PermissionErrorCode = CodesOf<
  | 'permission_request_not_found'
  | 'invalid_permission_outcome'
  | 'invalid_option_id'
  | 'invalid_permission_request'
  | 'permission_limit_exceeded'
>;

/** Base of every error the permission broker throws: a stable `code`, never a message to match. */
export abstract class PermissionError extends CataloguedError<PermissionErrorCode> {}

/**
 * No open request has this id (on this session): never asked, or already resolved. The two are
 * deliberately not told apart on the wire (HTTP `404`); a late vote also gets
 * `permission_already_resolved` on the session's stream.
 */
export class PermissionRequestNotFoundError extends PermissionError {
  readonly code = 'permission_request_not_found';
  constructor(readonly requestId: string) {
    super(`No open permission request with id ${describeValue(requestId)}`);
  }

  override wireDetails(): Record<string, unknown> {
    return { requestId: this.requestId };
  }
}

/** A vote body is not `{outcome:{outcome:"selected",optionId}}` or `{outcome:{outcome:"cancelled"}}` (HTTP `400`). */
export class InvalidPermissionOutcomeError extends PermissionError {
  readonly code = 'invalid_permission_outcome';
  constructor(detail: string) {
    super(`outcome must be {"outcome":"selected","optionId":string} or {"outcome":"cancelled"}: ${detail}`);
  }
}

/** A vote selected an option the request did not offer (HTTP `400 invalid_option_id`). */
export class InvalidOptionIdError extends PermissionError {
  readonly code = 'invalid_option_id';
  constructor(
    readonly requestId: string,
    readonly optionId: string,
  ) {
    super(
      `Option ${describeValue(optionId)} was not offered by permission request ${describeValue(requestId)}`,
    );
  }

  override wireDetails(): Record<string, unknown> {
    return { requestId: this.requestId, optionId: this.optionId };
  }
}

/** An agent asked with a malformed request (no options, duplicate ids, unknown kinds, …). */
export class InvalidPermissionRequestError extends PermissionError {
  readonly code = 'invalid_permission_request';
  constructor(detail: string) {
    super(`Invalid permission request: ${detail}`);
  }
}

/** The session already has `limit` open permission requests; nothing was published. */
export class PermissionLimitExceededError extends PermissionError {
  readonly code = 'permission_limit_exceeded';
  constructor(
    readonly sessionId: string,
    readonly limit: number,
  ) {
    super(`Session "${sessionId}" already has ${limit} open permission requests`);
  }
}
