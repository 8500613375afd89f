import { invalidValue, nonNegativeInteger as count, positiveFiniteNumber } from '@sluice/protocol';
import { DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION, MAX_TIMER_MS } from './defaults.js';

// Every check of an option or argument, in the one form of @sluice/protocol's validation
// (`<name> must be <rule>, got <value>`); the SDK's throw `TypeError`.

/**
 * Normalizes `maxPendingPromptsPerSession` (BP-13): the capability value passes straight
 * through, `null`, `0` and `Infinity` mean "no local limit" (returned as `Infinity`), and a
 * negative, fractional or non-number value is a `TypeError` naming it.
 */
export function normalizePendingPromptLimit(value: number | null | undefined): number {
  if (value === undefined) return DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION;
  if (value === null || value === 0 || value === Infinity) return Infinity;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw invalidValue(
      'maxPendingPromptsPerSession',
      'a non-negative integer, Infinity or null',
      value,
      TypeError,
    );
  return value;
}

/** A non-negative duration in ms where `0` and `Infinity` mean "none"; `undefined` → `fallback`. */
export function optionalTimeoutMs(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (value === Infinity || value === 0) return 0;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw invalidValue(name, 'a non-negative number of milliseconds or Infinity', value, TypeError);
  return value;
}

/** A non-negative integer option. */
export function nonNegativeInteger(name: string, value: number): number {
  return count(name, value, TypeError);
}

/** A positive finite number option. */
export function positiveNumber(name: string, value: number): number {
  return positiveFiniteNumber(name, value, TypeError);
}

/** A whole number of ms a timer can wait (0 … {@link MAX_TIMER_MS}); `0` means none. */
export function timerMs(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_TIMER_MS)
    throw invalidValue(name, `an integer number of milliseconds in [0, ${MAX_TIMER_MS}]`, value, TypeError);
  return value;
}

/** An event id to resume after: a non-negative safe integer, or `undefined` for none. */
export function eventCursor(name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  return count(name, value, TypeError);
}

/** The daemon's base URL: an absolute http(s) URL, returned without trailing slashes. */
export function baseUrl(value: unknown): string {
  if (typeof value !== 'string') throw invalidValue('baseUrl', 'a string', value, TypeError);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidValue('baseUrl', 'an absolute http(s) URL', value, TypeError);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalidValue('baseUrl', 'an absolute http(s) URL', value, TypeError);
  return value.replace(/\/+$/, '');
}

/** An options argument that must be an object. */
export function optionsObject<T>(name: string, value: T): T {
  if (typeof value !== 'object' || value === null)
    throw invalidValue(`${name} options`, 'an object', value, TypeError);
  return value;
}

/** An optional string that must not be empty when given. */
export function optionalNonEmptyString(name: string, value: unknown): string | undefined {
  if (value !== undefined && (typeof value !== 'string' || value.length === 0))
    throw invalidValue(name, 'a non-empty string when given', value, TypeError);
  return value as string | undefined;
}

/** An optional function. */
export function optionalFunction<F>(name: string, value: F | undefined): F | undefined {
  if (value !== undefined && typeof value !== 'function')
    throw invalidValue(name, 'a function', value, TypeError);
  return value;
}

/** The session a `DaemonSessionClient` binds to: `{ client, session }` with a string session id. */
export function sessionClientOptions<T extends { client: unknown; session: { sessionId: unknown } }>(
  options: T,
): T {
  if (typeof options !== 'object' || options === null || typeof options.client !== 'object')
    throw invalidValue('DaemonSessionClient options', 'an object { client, session }', options, TypeError);
  if (typeof options.session?.sessionId !== 'string')
    throw invalidValue('session.sessionId', 'a string', options.session?.sessionId, TypeError);
  return options;
}
