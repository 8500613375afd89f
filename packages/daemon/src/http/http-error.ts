/** An error the HTTP layer raises itself (bad header, bad query, draining); mapped like any other. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string | undefined,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** The daemon is draining and admits nothing new. */
export function drainingError(): HttpError {
  return new HttpError(
    503,
    'daemon_shutting_down',
    'The daemon is shutting down',
    {},
    { 'Retry-After': '5' },
  );
}
