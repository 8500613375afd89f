import { CataloguedError, type ModelErrorCode, type OverloadCapacity, type WireForm } from '@sluice/protocol';

/**
 * Base of every error the model runtime reports. `code` is stable on the wire; `retryable`
 * says whether the same call may succeed if simply tried again later.
 */
export abstract class ModelRuntimeError extends CataloguedError<ModelErrorCode> {}

/** A capacity of the scheduler was full; nothing was accepted (SCH-14). */
export class OverloadedError extends ModelRuntimeError {
  readonly code = 'model_overloaded';
  constructor(
    readonly capacity: OverloadCapacity,
    readonly limit: number,
    /**
     * When a slot is likely free, from the scheduler's state: the calls ahead, the slots, and
     * how long calls recently held a slot; at least 1 s (issue 19 item 11).
     */
    readonly retryAfterMs: number = 1_000,
  ) {
    super(overloadMessage(capacity, limit), { stack: false });
  }

  /** `Retry-After` from the scheduler's estimate rather than the catalogue's 1 s. */
  override wireForm(): WireForm {
    return { ...super.wireForm(), retryAfter: Math.ceil(this.retryAfterMs / 1_000) };
  }
}

function overloadMessage(capacity: OverloadCapacity, limit: number): string {
  switch (capacity) {
    case 'QueueFull':
      return `Model scheduler queue is full (${limit} waiting); retry later`;
    case 'InflightFull':
      return `Model scheduler in-flight capacity is full (${limit} accepted calls not yet cleaned up); retry later`;
    case 'RateLimited':
      return `The fleet's shared rate limit is spent (${limit} per minute); retry later`;
    case 'FleetUnavailable':
      return 'The fleet capacity store is unreachable and this daemon refuses calls meanwhile; retry later';
  }
}

/** The serialized request exceeds `maxRequestBytes`; nothing was accepted (SCH-17). */
export class RequestTooLargeError extends ModelRuntimeError {
  readonly code = 'request_too_large';
  constructor(readonly limitBytes: number) {
    super(`Model request is larger than maxRequestBytes (${limitBytes} bytes); shorten the conversation`);
  }
}

/** Where a call's deadline was spent. */
export type TimeoutPhase = 'admission' | 'queued' | 'preparing' | 'executing';

/** A controlled timeout: the call's absolute deadline passed (SCH-6). */
export class TimeoutError extends ModelRuntimeError {
  readonly code: ModelErrorCode = 'model_timeout';
  constructor(
    readonly timeoutMs: number,
    readonly phase: TimeoutPhase,
  ) {
    super(`Model call timed out after ${timeoutMs} ms (deadline reached while ${phase})`);
  }
}

/** The deadline was spent while waiting for a slot; keeps the Timeout class (SCH-14). */
export class QueueTimeoutError extends TimeoutError {
  override readonly code = 'model_queue_timeout';
  constructor(timeoutMs: number) {
    super(timeoutMs, 'queued');
  }
}

/** The call's timeout cannot form a usable deadline (SCH-7). */
export class InvalidTimeoutError extends ModelRuntimeError {
  readonly code = 'invalid_timeout';
  constructor(readonly timeout: unknown) {
    super(`timeout must be a non-negative number of milliseconds, got ${String(timeout)}`);
  }
}

/** Why a task budget refuses more work. */
export type BudgetReason = 'calls' | 'input_tokens' | 'output_tokens' | 'cost' | 'activity_time' | 'stopped';

/** The task budget is exhausted or was stopped; the typed reason is kept (SCH-14). */
export class BudgetError extends ModelRuntimeError {
  readonly code = 'budget_exhausted';
  constructor(
    readonly reason: BudgetReason,
    readonly taskId: string,
    detail?: string,
  ) {
    super(`Task budget of "${taskId}" refuses the call: ${reason}${detail ? ` (${detail})` : ''}`);
  }
}

/** The host cancelled the call, or a stream's consumer went away. */
export class CancelledError extends ModelRuntimeError {
  readonly code = 'model_cancelled';
  constructor(readonly reason: 'host' | 'consumer_gone' = 'host') {
    super(reason === 'host' ? 'Model call was cancelled' : 'Model stream consumer went away');
  }
}

/** The runtime is shutting down and accepts no work; queued work is cancelled with this. */
export class RuntimeStoppedError extends ModelRuntimeError {
  readonly code = 'runtime_stopped';
  constructor() {
    super('Model runtime is shutting down');
  }
}

/** What the runtime tried when a journal append failed — the evidence of SCH-13/15. */
export interface RecordingEvidence {
  callId: string;
  record: 'model_request' | 'model_result';
  journal: string;
  /** Wall-clock time the append failed, ISO 8601. */
  failedAt: string;
  /** The journal's own error message. */
  error: string;
}

/** The `ModelRequest` record could not be confirmed; the provider was never started (SCH-15). */
export class RecordingError extends ModelRuntimeError {
  readonly code: ModelErrorCode = 'model_recording_failed';
  constructor(
    readonly evidence: RecordingEvidence,
    options?: { cause?: unknown },
  ) {
    super(
      `Model call ${evidence.callId}: journal "${evidence.journal}" failed to record ${evidence.record}: ${evidence.error}`,
      options,
    );
  }
}

/**
 * The `ModelResult` record could not be confirmed after the provider ran: the outcome is not
 * delivered as success and keeps this classification, never masked by a timeout (SCH-16).
 */
export class ModelClosureFailure extends RecordingError {
  override readonly code = 'model_closure_failure';
  constructor(
    evidence: RecordingEvidence,
    /** The call's own outcome before recording failed: `success`, or the error's code. */
    readonly outcome: string,
    options?: { cause?: unknown },
  ) {
    super(evidence, options);
  }
}

/**
 * What an upstream answered with an HTTP error: its status, its error object (whose message may
 * quote the request) and its `Retry-After`. The model gateway relays it to the client that made
 * the request; it is never journaled or logged.
 */
export interface UpstreamError {
  status: number;
  /** The body's `error` member as the upstream sent it, when it had one. */
  error?: unknown;
  /** The `Retry-After` header, verbatim. */
  retryAfter?: string;
}

/** The provider failed (HTTP error, network error, malformed answer); never includes prompt text. */
export class ProviderError extends ModelRuntimeError {
  readonly code = 'model_provider_error';
  /**
   * The upstream's own error answer, for the gateway to relay. Not enumerable, so that logging
   * or serializing the error never shows it (its message may quote the prompt).
   */
  declare readonly upstream: UpstreamError | undefined;
  readonly #retryable: boolean;
  constructor(
    message: string,
    retryable: boolean,
    readonly status?: number,
    options?: { cause?: unknown; upstream?: UpstreamError },
  ) {
    super(message, options);
    this.#retryable = retryable;
    Object.defineProperty(this, 'upstream', { value: options?.upstream, enumerable: false });
  }

  /** Per call: whether the provider's failure may pass (a 429, a 5xx, a network error). */
  override get retryable(): boolean {
    return this.#retryable;
  }

  /** An upstream's answer keeps the upstream's status and `Retry-After` (never logged). */
  override wireForm(): WireForm {
    const upstream = this.upstream;
    if (upstream === undefined) return super.wireForm();
    const form = { status: upstream.status, retryable: this.#retryable };
    return upstream.retryAfter === undefined ? form : { ...form, retryAfter: upstream.retryAfter };
  }

  /** The upstream's own error object, for the gateway to relay. */
  override wireDetails(): Record<string, unknown> {
    const error = this.upstream?.error;
    return error === undefined ? {} : { upstream: error };
  }
}
