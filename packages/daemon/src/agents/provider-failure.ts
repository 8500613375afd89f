import type { UpstreamError } from '@sluice/runtime';

/** Most characters of the upstream's own message that a turn error quotes. */
const MAX_UPSTREAM_MESSAGE_CHARS = 300;

/** What to check, by the upstream's HTTP status. */
const HINTS: Record<number, string> = {
  401: 'check OPENAI_API_KEY (ANTHROPIC_API_KEY with --provider anthropic), the key the daemon sends to its provider',
  403: 'check OPENAI_API_KEY (ANTHROPIC_API_KEY with --provider anthropic) and what it may use',
  404: 'check --model and --base-url',
};

/**
 * A provider failure as a person can act on it (issue 19 item 13): the runtime's sanitized
 * message (`… answered HTTP 401 (invalid_api_key)`) plus the upstream's own message and what to
 * check, with the upstream's `Retry-After` in ms. The turn's client sent the prompt, so it may
 * read what the upstream said about it; the journal keeps the sanitized message only.
 */
export class ProviderTurnError extends Error {
  readonly code = 'model_provider_error';
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status: number,
    readonly retryAfterMs: number | undefined,
    options: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ProviderTurnError';
  }
}

/** `error` explained when it is a provider error with an upstream answer; else `error` itself. */
export function explainProviderFailure(error: unknown): unknown {
  const failure = error as {
    code?: unknown;
    upstream?: UpstreamError;
    message?: unknown;
    retryable?: unknown;
  };
  const upstream = failure?.upstream;
  if (failure?.code !== 'model_provider_error' || upstream === undefined) return error;
  const own = upstreamMessage(upstream.error);
  const hint = HINTS[upstream.status];
  const retryAfterMs = retryAfterOf(upstream.retryAfter);
  let message = String(failure.message);
  if (own !== undefined) message += `: ${own}`;
  if (hint !== undefined) message += ` — ${hint}`;
  else if (upstream.status === 429 && retryAfterMs !== undefined)
    message += ` — the provider asks to retry after ${Math.ceil(retryAfterMs / 1000)} s`;
  return new ProviderTurnError(message, failure.retryable === true, upstream.status, retryAfterMs, {
    cause: error,
  });
}

function upstreamMessage(error: unknown): string | undefined {
  const message = typeof error === 'string' ? error : (error as { message?: unknown } | undefined)?.message;
  if (typeof message !== 'string' || message.trim() === '') return undefined;
  const flat = message.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_UPSTREAM_MESSAGE_CHARS ? `${flat.slice(0, MAX_UPSTREAM_MESSAGE_CHARS)}…` : flat;
}

/** `Retry-After` in ms: delay-seconds or an HTTP date. */
function retryAfterOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
