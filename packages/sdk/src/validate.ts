import { DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION, MAX_TIMER_MS } from './defaults.js';

// Every check of an option or argument, with the value in its message.

/**
 * Normalizes `maxPendingPromptsPerSession` (BP-13): the capability value passes straight
 * through, `null`, `0` and `Infinity` mean "no local limit" (returned as `Infinity`), and a
 * negative, fractional or non-number value is a `TypeError` naming it.
 */
export function normalizePendingPromptLimit(value: number | null | undefined): number {
  if (value === undefined) return DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION;
  if (value === null || value === 0 || value === Infinity) return Infinity;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw new TypeError(
      `maxPendingPromptsPerSession must be a non-negative integer, Infinity or null, got ${String(value)}`,
    );
  return value;
}

/** A non-negative duration in ms where `0` and `Infinity` mean "none"; `undefined` → `fallback`. */
export function optionalTimeoutMs(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (value === Infinity || value === 0) return 0;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw new TypeError(
      `${name} must be a non-negative number of milliseconds or Infinity, got ${String(value)}`,
    );
  return value;
}

/** A non-negative integer option. */
export function nonNegativeInteger(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw new TypeError(`${name} must be a non-negative integer, got ${String(value)}`);
  return value;
}

/** A positive finite number option. */
export function positiveNumber(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new TypeError(`${name} must be a positive finite number, got ${String(value)}`);
  return value;
}

/** A whole number of ms a timer can wait (0 … {@link MAX_TIMER_MS}); `0` means none. */
export function timerMs(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_TIMER_MS)
    throw new TypeError(
      `${name} must be an integer number of milliseconds in [0, ${MAX_TIMER_MS}], got ${String(value)}`,
    );
  return value;
}

/** An event id to resume after: a non-negative safe integer, or `undefined` for none. */
export function eventCursor(name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < 0)
    throw new TypeError(`${name} must be a non-negative integer, got ${String(value)}`);
  return value;
}

/** The daemon's base URL: an absolute http(s) URL, returned without trailing slashes. */
export function baseUrl(value: unknown): string {
  if (typeof value !== 'string') throw new TypeError(`baseUrl must be a string, got ${String(value)}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`baseUrl must be an absolute http(s) URL, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError(`baseUrl must be an absolute http(s) URL, got ${JSON.stringify(value)}`);
  return value.replace(/\/+$/, '');
}

/** An options argument that must be an object. */
export function optionsObject<T>(name: string, value: T): T {
  if (typeof value !== 'object' || value === null)
    throw new TypeError(`${name} options must be an object, got ${String(value)}`);
  return value;
}

/** An optional string that must not be empty when given. */
export function optionalNonEmptyString(name: string, value: unknown): string | undefined {
  if (value !== undefined && (typeof value !== 'string' || value.length === 0))
    throw new TypeError(`${name} must be a non-empty string when given`);
  return value as string | undefined;
}

/** An optional function. */
export function optionalFunction<F>(name: string, value: F | undefined): F | undefined {
  if (value !== undefined && typeof value !== 'function')
    throw new TypeError(`${name} must be a function, got ${typeof value}`);
  return value;
}

/** The session a `DaemonSessionClient` binds to: `{ client, session }` with a string session id. */
export function sessionClientOptions<T extends { client: unknown; session: { sessionId: unknown } }>(
  options: T,
): T {
  if (typeof options !== 'object' || options === null || typeof options.client !== 'object')
    throw new TypeError('DaemonSessionClient needs { client, session }');
  if (typeof options.session?.sessionId !== 'string')
    throw new TypeError(`session.sessionId must be a string, got ${String(options.session?.sessionId)}`);
  return options;
}
