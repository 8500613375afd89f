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
        `cannot reach the daemon at ${this.baseUrl} (${reason(error)}); ${hint(error, this.baseUrl)}`,
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

/** The certificate checks whose failure means the client does not trust the daemon's CA. */
const UNTRUSTED_CERTIFICATE = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
]);

/** What to check, for a failed connection: TLS trust and names (docs/security.md), the scheme, the URL. */
function hint(error: unknown, baseUrl: string): string {
  const code = (error as { cause?: { code?: unknown } }).cause?.code;
  if (typeof code === 'string' && UNTRUSTED_CERTIFICATE.has(code))
    return 'its TLS certificate is not trusted here: set NODE_EXTRA_CA_CERTS to the PEM file of the certificate (or of its CA)';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return 'its TLS certificate does not name this host: pass --url with a name the certificate carries';
  if (code === 'CERT_HAS_EXPIRED') return 'its TLS certificate has expired';
  if (code === 'UND_ERR_SOCKET' && baseUrl.startsWith('http:'))
    return 'is it running? if it serves HTTPS (--tls-cert), pass --url https://…';
  return 'is it running? pass --url';
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
