import { type Clock, type TimerHandle } from '../clock.js';
import { ProviderError } from '../errors.js';
import { detail } from './openai-http.js';
import type { ProviderCallOptions } from '../types.js';

/** How one SDK's failure (not an abort, not the scope's timeout) becomes a {@link ProviderError}. */
export type ProviderErrorOf = (endpoint: string, error: unknown) => ProviderError;

/**
 * The abort scope of one HTTP call: a private controller linked to the runtime's signal and to
 * a timer for the whole call, so an SDK client never holds a listener on the runtime's signal
 * and the timeout also covers reading the body or stream. Shared by the SDK-backed providers.
 */
export class HttpCallScope {
  readonly requestOptions: { signal: AbortSignal; timeout: number };
  private readonly controller = new AbortController();
  private readonly timer: TimerHandle;
  private timedOut = false;
  private readonly onAbort = (): void => this.controller.abort(this.outer.reason);
  private readonly outer: AbortSignal;

  constructor(
    private readonly endpoint: string,
    private readonly clock: Clock,
    options: ProviderCallOptions,
    /** The SDK's own timeout error, reported like the scope's. */
    private readonly isTimeout: (error: unknown) => boolean,
    private readonly toProviderError: ProviderErrorOf,
  ) {
    this.outer = options.signal;
    this.outer.throwIfAborted();
    const { timeoutMs } = options;
    if (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs <= 0) {
      throw new RangeError(`timeoutMs must be a positive number, got ${String(timeoutMs)}`);
    }
    // The clients want a positive integer; an unrepresentable timeout is capped at the timer limit.
    const timeout = Math.min(Math.ceil(timeoutMs), clock.maxTimerMs);
    this.requestOptions = { signal: this.controller.signal, timeout };
    this.outer.addEventListener('abort', this.onAbort, { once: true });
    this.timer = clock.setTimer(() => {
      this.timedOut = true;
      this.controller.abort();
    }, timeout);
  }

  /** Throws the runtime's abort reason, or the timeout, once the call was stopped. */
  throwIfStopped(): void {
    if (this.controller.signal.aborted) throw this.translate(undefined);
  }

  /** The error to surface for `error`: the runtime's own reason on abort, else a ProviderError. */
  translate(error: unknown): unknown {
    if (this.outer.aborted) return this.outer.reason;
    if (error instanceof ProviderError) return error;
    if (this.timedOut || this.isTimeout(error)) {
      return new ProviderError(
        `${this.endpoint} did not answer within ${this.requestOptions.timeout} ms`,
        true,
      );
    }
    return this.toProviderError(this.endpoint, error);
  }

  /** Cancels the HTTP request when a stream is left before its end. */
  abandon(): void {
    if (!this.controller.signal.aborted) this.controller.abort();
  }

  dispose(): void {
    this.outer.removeEventListener('abort', this.onAbort);
    this.clock.clearTimer(this.timer);
  }
}

/** The first `code` such as `ECONNREFUSED` along the cause chain. */
export function networkCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z_]+$|^UND_ERR/.test(code)) return code;
    current = current.cause;
  }
  return undefined;
}

/** `value` as an http(s) URL, or a TypeError naming the option and the value. */
export function httpURL(value: string, option = 'baseURL'): URL {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new TypeError(`${option} must be an http(s) URL, got ${JSON.stringify(value)}`);
  }
  return url;
}

/** The variable's value, or undefined when it is unset or empty. */
export function nonEmptyEnv(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** An SDK's connection error: the endpoint could not be reached. */
export function unreachable(endpoint: string, error: unknown): ProviderError {
  return new ProviderError(`could not reach ${endpoint}${detail(networkCode(error))}`, true, undefined, {
    cause: error,
  });
}

/**
 * A failure that is not the SDK's own error class: a malformed body, a connection lost mid-body
 * (undici's `TypeError: terminated`), else an unknown failure named by its class only.
 */
export function transportError(endpoint: string, error: unknown): ProviderError {
  if (error instanceof SyntaxError) return new ProviderError(`${endpoint} sent a malformed response`, false);
  if (error instanceof TypeError || networkCode(error) !== undefined) {
    return new ProviderError(
      `connection to ${endpoint} failed${detail(networkCode(error))}`,
      true,
      undefined,
      {
        cause: error,
      },
    );
  }
  const name = error instanceof Error ? error.name : typeof error;
  return new ProviderError(`call to ${endpoint} failed${detail(name)}`, false, undefined, { cause: error });
}
