/** Options of a {@link SluiceError}. */
export interface SluiceErrorOptions {
  cause?: unknown;
  /**
   * `false` for expected refusals (a full queue, an overloaded runtime): they are answers, not
   * bugs, a stack trace would say nothing, and capturing one costs more than the refusal itself
   * on a path that must stay cheap under overload.
   */
  stack?: boolean;
}

/**
 * Base of every error Sluice reports: a stable `code` that HTTP, ACP and SDK callers switch
 * on (never the message), and whether the same request may succeed if simply retried later.
 */
export abstract class SluiceError<Code extends string = string> extends Error {
  abstract readonly code: Code;
  abstract readonly retryable: boolean;

  constructor(message: string, options?: SluiceErrorOptions) {
    if (options?.stack === false) {
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 0;
      super(message, options);
      Error.stackTraceLimit = limit;
    } else super(message, options);
    this.name = new.target.name;
  }
}
