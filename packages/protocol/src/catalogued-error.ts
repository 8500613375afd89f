import { ERROR_CATALOGUE, type WireErrorCode, type WireForm } from './error-catalogue.js';
import { SluiceError, type SluiceErrorOptions } from './errors.js';

const NO_DETAILS: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * An error whose code is in {@link ERROR_CATALOGUE}: its status, `retryable` and `Retry-After`
 * come from there, and the class says only what its wire body carries. The body is
 * `{error: wireMessage(), code, ...wireDetails()}` (PROTOCOL §1); no class knows about HTTP.
 */
export abstract class CataloguedError<Code extends WireErrorCode = WireErrorCode> extends SluiceError<Code> {
  /** Whether the same request may succeed later: the catalogue's word for the code. */
  get retryable(): boolean {
    return ERROR_CATALOGUE[this.code].retryable;
  }

  /** How this error travels: its code's catalogued form, which a class may refine per instance. */
  wireForm(): WireForm {
    return ERROR_CATALOGUE[this.code];
  }

  /** The `error` of the wire body: the error's own message unless the class says otherwise. */
  wireMessage(): string {
    return this.message;
  }

  /** Fields of the wire body after `error` and `code`, in order; none unless the class names some. */
  wireDetails(): Readonly<Record<string, unknown>> {
    return NO_DETAILS;
  }
}

/**
 * A catalogued error raised without a class of its own (a transport's refusal of a header or a
 * query): its code, message and body fields. `new CodedError('invalid_purge', message)`.
 */
export class CodedError<Code extends WireErrorCode = WireErrorCode> extends CataloguedError<Code> {
  constructor(
    readonly code: Code,
    message: string,
    private readonly details: Readonly<Record<string, unknown>> = NO_DETAILS,
    options?: SluiceErrorOptions,
  ) {
    super(message, options);
  }

  override wireDetails(): Readonly<Record<string, unknown>> {
    return this.details;
  }
}
