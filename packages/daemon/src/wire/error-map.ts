import { CataloguedError, clipText } from '@sluice/protocol';

/** What an error becomes on the wire. */
export interface MappedError {
  statusCode: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** Fastify's own errors: body size, content type, malformed JSON. */
const FASTIFY_CODES: Record<string, { status: number; message?: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, message: 'Request body is too large (limit 10 MB)' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, message: 'Unsupported Content-Type; send application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, message: 'Invalid Content-Length' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, message: 'Invalid JSON in request body' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, message: 'Invalid JSON in request body' },
  // The router's refusals (fastify's `frameworkErrors`): their own messages quote the whole path.
  FST_ERR_BAD_URL: { status: 400, message: 'The URL is not valid: a malformed percent-encoding' },
  FST_ERR_MAX_PARAM_LENGTH: { status: 414, message: 'A path parameter is longer than 100 characters' },
};

/**
 * Maps any error to its response (PROTOCOL §1). A catalogued error answers with its code's wire
 * form from @sluice/protocol's `ERROR_CATALOGUE` and the body its class declares; ACP derives its
 * JSON-RPC errors from this answer (acp/rpc-errors.ts), the model gateway its OpenAI errors.
 * Client mistakes fastify detects keep their 4xx; anything else is a 500 without internals.
 */
export function mapError(error: unknown): MappedError {
  if (error instanceof CataloguedError) {
    const form = error.wireForm();
    return {
      statusCode: form.status,
      headers: form.retryAfter === undefined ? {} : { 'Retry-After': String(form.retryAfter) },
      body: { error: error.wireMessage(), code: error.code, ...clipStrings(error.wireDetails()) },
    };
  }
  const fields = typeof error === 'object' && error !== null ? (error as Record<string, unknown>) : {};
  const code = typeof fields['code'] === 'string' ? fields['code'] : undefined;
  const known = code === undefined ? undefined : FASTIFY_CODES[code];
  if (known) {
    return {
      statusCode: known.status,
      headers: {},
      body: { error: known.message ?? (error as Error).message },
    };
  }
  const status = fields['statusCode'];
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return { statusCode: status, headers: {}, body: { error: clipText(String((error as Error).message)) } };
  }
  return { statusCode: 500, headers: {}, body: { error: 'Internal server error' } };
}

/**
 * An error's body fields with every text clipped to 200 characters (issue 28): a field that
 * carries a client's value (an id, a path) never repeats more of it. Messages quote values
 * through `describeValue`, which clips the same way.
 */
export function clipStrings(fields: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields))
    out[key] = typeof value === 'string' ? clipText(value) : value;
  return out;
}
