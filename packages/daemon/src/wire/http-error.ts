/** An error a transport (HTTP or ACP) raises itself, with its status and code; mapped like any other. */
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
