import http from 'node:http';
import https from 'node:https';
import { ProviderError } from '../errors.js';

const noop = (): void => {};

/** The error a stopped exchange fails with; the caller's scope reports the reason it stopped. */
const abortError = (): Error => new DOMException('This operation was aborted', 'AbortError');

/** What one POST answered: the status, the headers and the whole body as text. */
export interface PostedAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/**
 * Chat-completions calls over `node:http` with keep-alive connections, for the gateway's hot
 * path. The `openai` SDK on undici `fetch` cost ~0.5 ms of the daemon's time per small call, and
 * ~3 ms per streamed call of an agent's 80 KiB request (its body checked and encoded as a string,
 * web streams, an SSE decoder per chunk); here the body goes out as the bytes it was encoded to
 * and a stream is read straight from the socket. A custom `fetch` still selects the SDK.
 */
export class JsonPoster {
  private readonly agent: http.Agent;
  private readonly send: typeof http.request;

  constructor(
    private readonly url: URL,
    private readonly endpoint: string,
    private readonly headers: Readonly<Record<string, string>>,
  ) {
    const secure = url.protocol === 'https:';
    this.agent = secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
    this.send = secure ? https.request : http.request;
  }

  /** POSTs `body` and reads the whole answer; rejects as {@link open} does. */
  async post(body: Buffer, signal: AbortSignal, timeoutMs: number): Promise<PostedAnswer> {
    const response = await this.open(body, signal, timeoutMs);
    const text = await this.textOf(response, signal);
    return { status: response.statusCode ?? 0, headers: response.headers, text };
  }

  /**
   * POSTs `body`; resolves with the response once its head arrived, its body unread. Rejects
   * with a {@link ProviderError} when the connection fails, or with the error of `signal`'s abort.
   */
  open(body: Buffer, signal: AbortSignal, timeoutMs: number): Promise<http.IncomingMessage> {
    if (signal.aborted) return Promise.reject(abortError());
    return new Promise((resolve, reject) => {
      const headers = {
        ...this.headers,
        'content-length': String(body.length),
        // As the SDK tells it (SCH-8): the effective timeout in whole seconds, and the attempt.
        'x-stainless-timeout': String(Math.ceil(timeoutMs / 1000)),
        'x-stainless-retry-count': '0',
      };
      let answer: http.IncomingMessage | undefined;
      const request = this.send(this.url, { method: 'POST', agent: this.agent, headers }, (response) => {
        answer = response;
        // A body left unread when the call stops (an abandoned stream) fails with no reader;
        // a reader hears its failures through its own iterator.
        response.on('error', noop);
        response.once('close', release);
        resolve(response);
      });
      // The signal ends the exchange only while it lasts: once the whole answer arrived, its
      // connection goes back to the keep-alive pool (destroying it then fails a socket no one
      // listens to), so what is left unread is only drained.
      const onAbort = (): void => {
        if (answer?.complete === true) answer.resume();
        else request.destroy(abortError());
      };
      const release = (): void => signal.removeEventListener('abort', onAbort);
      signal.addEventListener('abort', onAbort, { once: true });
      request.on('error', (error) => {
        release();
        reject(
          signal.aborted
            ? error
            : new ProviderError(`could not reach ${this.endpoint}${detail(codeOf(error))}`, true, undefined, {
                cause: error,
              }),
        );
      });
      request.end(body);
    });
  }

  /**
   * The whole body of `response` as text; a connection lost meanwhile is a {@link ProviderError},
   * unless `signal` stopped the call (its own error then, which the caller's scope reports).
   */
  async textOf(response: http.IncomingMessage, signal: AbortSignal): Promise<string> {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of response) chunks.push(chunk as Buffer);
    } catch (error) {
      throw signal.aborted ? error : this.lost(error as Error);
    }
    if (!response.complete) throw this.lost(undefined);
    return Buffer.concat(chunks).toString('utf8');
  }

  /** The failure of a connection lost while its answer was read. */
  lost(error: Error | undefined): ProviderError {
    return new ProviderError(
      `connection to ${this.endpoint} failed${detail(codeOf(error))}`,
      true,
      undefined,
      {
        cause: error,
      },
    );
  }
}

/**
 * The {@link ProviderError} of an HTTP error answer: a sanitized message (only identifier-like
 * `code`/`type`), and the upstream's own error object and `Retry-After` for the gateway.
 */
export function httpStatusError(endpoint: string, answer: PostedAnswer): ProviderError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.text);
  } catch {
    parsed = undefined;
  }
  const body = parsed as { error?: unknown } | undefined;
  const error = body && typeof body === 'object' && 'error' in body ? body.error : parsed;
  const retryAfter = answer.headers['retry-after'];
  return statusError(endpoint, answer.status, error, typeof retryAfter === 'string' ? retryAfter : undefined);
}

/**
 * An upstream's HTTP error answer, however it was read (here or by the SDK): the message keeps
 * only identifier-like `code`/`type` (the error's message may quote the request); the upstream's
 * error object and `Retry-After` travel apart, for the gateway to relay.
 */
export function statusError(
  endpoint: string,
  status: number,
  error: unknown,
  retryAfter: string | undefined,
  named = error as { code?: unknown; type?: unknown } | undefined,
): ProviderError {
  const upstream = { status, error, ...(retryAfter ? { retryAfter } : {}) };
  return new ProviderError(
    `${endpoint} answered HTTP ${status}${detail(named?.code ?? named?.type)}`,
    retryableStatus(status),
    status,
    { upstream },
  );
}

/** 408, 409, 429 and 5xx may succeed when tried again. */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** ` (value)` for an identifier-like value (an error code or type), else nothing. */
export function detail(value: unknown): string {
  return typeof value === 'string' && /^[\w.-]{1,64}$/.test(value) ? ` (${value})` : '';
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^E[A-Z_]+$/.test(code) ? code : undefined;
}
