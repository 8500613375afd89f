import { CLIENT_ID_HEADER, type WireErrorBody } from '@sluice/protocol';
import { anySignal, timeoutController } from './abort.js';
import { DaemonHttpError, DaemonProtocolError } from './errors.js';
import { parseRetryAfter } from './retry-after.js';

/** A `fetch` with the standard signature (the global one, undici's, a test double). */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** Options of one {@link HttpCore.send}. */
export interface SendOptions {
  body?: unknown;
  clientId?: string | undefined;
  signal?: AbortSignal | undefined;
  /** Apply the client's `fetchTimeoutMs` (default true; prompts and streams opt out). */
  timeout?: boolean;
  headers?: Record<string, string>;
}

/**
 * The HTTP plumbing every method shares: URL building, auth and client-id headers, the
 * per-call timeout, and turning a non-2xx answer into a {@link DaemonHttpError}.
 */
export class HttpCore {
  constructor(
    readonly baseUrl: string,
    private readonly token: string | undefined,
    private readonly fetchFn: FetchLike,
    private readonly fetchTimeoutMs: number,
    /** Times a prompt POST whose answer was lost is sent again (with its `Idempotency-Key`). */
    readonly promptRetries: number = 0,
  ) {}

  /** Request headers with the bearer token and client identity. */
  headers(extra: Record<string, string> = {}, clientId?: string): Record<string, string> {
    const headers: Record<string, string> = { ...extra };
    if (this.token !== undefined) headers['Authorization'] = `Bearer ${this.token}`;
    if (clientId !== undefined) headers[CLIENT_ID_HEADER] = clientId;
    return headers;
  }

  /** Sends one request; network errors and timeouts reject, any status resolves. */
  async send(method: string, path: string, options: SendOptions = {}): Promise<Response> {
    const timer = options.timeout === false ? timeoutController(0) : timeoutController(this.fetchTimeoutMs);
    const extra: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) extra['Content-Type'] = 'application/json';
    const signal = anySignal([options.signal, timer.signal]);
    try {
      return await this.fetchFn(`${this.baseUrl}${path}`, {
        method,
        headers: this.headers(extra, options.clientId),
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        ...(signal === undefined ? {} : { signal }),
      });
    } finally {
      timer.clear();
    }
  }

  /** Sends and reads the JSON answer; a non-2xx answer throws {@link DaemonHttpError}. */
  async json<T>(method: string, path: string, options: SendOptions = {}): Promise<T> {
    const response = await this.send(method, path, options);
    if (!response.ok) throw await errorFrom(response, `${method} ${path}`);
    return readJson<T>(response, `${method} ${path}`);
  }

  /** Sends and expects an empty success (`204` or `200`); the body is discarded. */
  async empty(
    method: string,
    path: string,
    options: SendOptions = {},
    alsoOk: number[] = [],
  ): Promise<number> {
    const response = await this.send(method, path, options);
    if (!response.ok && !alsoOk.includes(response.status))
      throw await errorFrom(response, `${method} ${path}`);
    await discard(response);
    return response.status;
  }
}

/** Reads a JSON body; an unreadable one is a {@link DaemonProtocolError}. */
export async function readJson<T>(response: Response, label: string): Promise<T> {
  const text = await response.text();
  try {
    return JSON.parse(text) as T;
  } catch (cause) {
    throw new DaemonProtocolError(`${label}: the ${response.status} answer is not JSON`, { cause });
  }
}

/** Drops a body we do not need, so the connection can be reused. */
export async function discard(response: Response): Promise<void> {
  try {
    await response.body?.cancel();
  } catch {
    /* already consumed */
  }
}

/** The {@link DaemonHttpError} of a non-2xx answer: status, parsed body, `Retry-After`. */
export async function errorFrom(response: Response, label: string): Promise<DaemonHttpError> {
  let body: unknown;
  try {
    const text = await response.text();
    try {
      body = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
  } catch {
    body = undefined;
  }
  const message =
    typeof body === 'object' && body !== null && typeof (body as WireErrorBody).error === 'string'
      ? (body as WireErrorBody).error
      : `HTTP ${response.status}`;
  return new DaemonHttpError(
    response.status,
    body,
    `${label}: ${message}`,
    parseRetryAfter(response.headers.get('Retry-After')),
  );
}

/** `/session/<id>` with the id escaped. */
export function sessionPath(sessionId: string, rest = ''): string {
  return `/session/${encodeURIComponent(sessionId)}${rest}`;
}

/** `/session/<id>/pending-prompts/<promptId>` with both ids escaped. */
export function pendingPromptPath(sessionId: string, promptId: string): string {
  return sessionPath(sessionId, `/pending-prompts/${encodeURIComponent(promptId)}`);
}
