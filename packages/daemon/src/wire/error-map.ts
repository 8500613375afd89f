import { CataloguedError } from '@sluice/protocol';

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
      body: { error: error.wireMessage(), code: error.code, ...error.wireDetails() },
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
    return { statusCode: status, headers: {}, body: { error: (error as Error).message } };
  }
  return { statusCode: 500, headers: {}, body: { error: 'Internal server error' } };
}
