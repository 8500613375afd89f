/**
 * Base of every error Sluice reports: a stable `code` that HTTP, ACP and SDK callers switch
 * on (never the message), and whether the same request may succeed if simply retried later.
 */
export abstract class SluiceError<Code extends string = string> extends Error {
  abstract readonly code: Code;
  abstract readonly retryable: boolean;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}
