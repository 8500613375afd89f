/** Thrown when the daemon cannot be read; the CLI prints the message (and exits 1 unless watching). */
export class DaemonUnreachableError extends Error {
  /** The HTTP status when the daemon answered, else undefined. */
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** How long one request of `sluice status` may take before the daemon counts as unresponsive. */
export const STATUS_REQUEST_TIMEOUT_MS = 5_000;

/**
 * GETs JSON from a running daemon for `sluice status`, with its bearer token when one is given.
 * Every failure becomes a {@link DaemonUnreachableError} that says what to check.
 */
export class DaemonReader {
  private readonly headers: Record<string, string>;

  constructor(
    readonly baseUrl: string,
    token: string | undefined,
    private readonly timeoutMs: number = STATUS_REQUEST_TIMEOUT_MS,
  ) {
    this.headers = { accept: 'application/json' };
    if (token !== undefined) this.headers['authorization'] = `Bearer ${token}`;
  }

  /** The JSON body of `GET path`; throws {@link DaemonUnreachableError} on any failure. */
  async get<T>(path: string): Promise<T> {
    const url = new URL(path, this.baseUrl);
    let response: Response;
    try {
      response = await fetch(url, { headers: this.headers, signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (error) {
      throw new DaemonUnreachableError(
        `cannot reach the daemon at ${this.baseUrl} (${reason(error)}); is it running? pass --url`,
      );
    }
    const text = await response.text();
    if (response.status === 401)
      throw new DaemonUnreachableError(
        `the daemon at ${this.baseUrl} wants a token (401): pass --token or set SLUICE_TOKEN`,
        401,
      );
    if (!response.ok)
      throw new DaemonUnreachableError(
        `GET ${url.pathname} answered ${response.status}: ${errorOf(text)}`,
        response.status,
      );
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new DaemonUnreachableError(
        `GET ${url.pathname} did not answer JSON; is ${this.baseUrl} a sluice daemon?`,
      );
    }
  }
}

function reason(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return 'no answer in time';
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  return error instanceof Error ? error.message : String(error);
}

/** The `error` of a JSON error body, else the start of the text. */
function errorOf(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown };
    if (typeof body.error === 'string') return body.error;
  } catch {
    /* not JSON */
  }
  return text.slice(0, 200);
}
