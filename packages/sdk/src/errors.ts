import { SluiceError, type EventEnvelope, type TurnErrorData } from '@sluice/protocol';

function bodyField(body: unknown, key: string): unknown {
  return typeof body === 'object' && body !== null && !Array.isArray(body)
    ? (body as Record<string, unknown>)[key]
    : undefined;
}

/**
 * Any non-2xx answer of the daemon. `code` is the wire's stable code (`session_not_found`,
 * `invalid_client_id`, …) or `http_<status>` when the body has none; switch on it, never on
 * the message. `retryAfterMs` is the parsed `Retry-After` header when there was one.
 * Constructor arguments follow the reference client's `(status, body, message)`.
 */
export class DaemonHttpError extends SluiceError<string> {
  readonly code: string;
  readonly retryable: boolean;

  constructor(
    readonly status: number,
    readonly body: unknown,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    const code = bodyField(body, 'code');
    this.code = typeof code === 'string' ? code : `http_${status}`;
    this.retryable = status === 503 || status === 429;
  }
}

/**
 * A prompt that was admitted but ended with `turn_error` (deadline, session closed, model
 * errors). It is a {@link DaemonHttpError} (504 for a deadline, 500 otherwise) so code that
 * handles daemon failures in one place keeps working; tell it apart with {@link isDaemonTurnError}.
 */
export class DaemonTurnError extends DaemonHttpError {
  /** Marker the reference client's `isDaemonTurnError` checks. */
  readonly _daemonTurnError = true as const;
  readonly promptId: string;
  /** The `turn_error` event's `errorKind`, when the daemon sent one. */
  readonly errorKind: string | undefined;
  /**
   * True when sending the prompt again may succeed (`model_overloaded`, a provider's `429`,
   * `daemon_restarted`): the daemon says so in the event; wait `retryAfterMs` when it is set.
   */
  declare readonly retryable: boolean;

  constructor(readonly event: EventEnvelope<TurnErrorData>) {
    const data = event.data;
    const status = data.code === 'prompt_deadline_exceeded' ? 504 : 500;
    const retryAfterMs =
      typeof data.retryAfterMs === 'number' && Number.isFinite(data.retryAfterMs) && data.retryAfterMs >= 0
        ? data.retryAfterMs
        : undefined;
    super(status, data, `Prompt ${data.promptId} failed: ${data.message}`, retryAfterMs);
    (this as { retryable: boolean }).retryable = data.retryable === true;
    this.promptId = data.promptId;
    this.errorKind = typeof data.errorKind === 'string' ? data.errorKind : undefined;
  }
}

/** True for an error that came from a prompt's `turn_error` event. */
export function isDaemonTurnError(error: unknown): error is DaemonTurnError {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { _daemonTurnError?: unknown })._daemonTurnError === true
  );
}

/**
 * The session already has `limit` outstanding prompts. `local: true` means the SDK refused
 * before sending anything (BP-12); `local: false` is the daemon's `503 prompt_queue_full`
 * with the server's figures and `retryAfterMs` from `Retry-After`.
 */
export class DaemonPendingPromptLimitError extends SluiceError<'prompt_queue_full'> {
  readonly code = 'prompt_queue_full' as const;
  readonly retryable = true;
  readonly local: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(
    readonly sessionId: string,
    readonly limit: number,
    readonly pendingCount: number,
    options: { local?: boolean; retryAfterMs?: number } = {},
  ) {
    super(`Prompt queue full for session "${sessionId}" (${pendingCount}/${limit} pending)`);
    this.local = options.local ?? true;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * The event stream ended for good (the daemon closed it and reconnecting was not possible
 * or not allowed) before the prompt's terminal event arrived: its outcome is unknown.
 */
export class DaemonStreamEndedError extends SluiceError<'event_stream_ended'> {
  readonly code = 'event_stream_ended' as const;
  readonly retryable = false;

  constructor(
    readonly sessionId: string,
    readonly promptId: string,
    options?: { cause?: unknown },
  ) {
    super(`The event stream of session "${sessionId}" ended before prompt ${promptId} finished`, options);
  }
}

/**
 * The daemon's event bus was reset (a restart: `state_resync_required {reason:'epoch_reset'}`)
 * and the replayed ring holds no terminal event for the prompt: its outcome is unknown.
 */
export class DaemonPromptLostError extends SluiceError<'prompt_outcome_lost'> {
  readonly code = 'prompt_outcome_lost' as const;
  readonly retryable = false;

  constructor(
    readonly sessionId: string,
    readonly promptId: string,
  ) {
    super(`The daemon's event epoch of session "${sessionId}" changed; prompt ${promptId} is lost`);
  }
}

/** A response the SDK could not read (not JSON, not the documented shape, not SSE). */
export class DaemonProtocolError extends SluiceError<'daemon_protocol_error'> {
  readonly code = 'daemon_protocol_error' as const;
  readonly retryable = false;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
