import { mapError } from '../wire/index.js';

/** An error's response with its body already serialized. */
export interface PreparedError {
  statusCode: number;
  headers: Record<string, string>;
  /** `JSON.stringify` of {@link mapError}'s body: the bytes fastify would have sent for it. */
  body: string;
}

/** What fastify sends with a serialized object; set by hand since the body is a string. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

const prepared = new WeakMap<object, PreparedError>();

/**
 * {@link mapError} for an error instance that is thrown again and again (the session layer
 * reuses the refusal of a full queue while its count stands), mapped and serialized once per
 * instance instead of on every refusal.
 */
export function preparedError(error: Error): PreparedError {
  let response = prepared.get(error);
  if (response === undefined) {
    const mapped = mapError(error);
    response = { statusCode: mapped.statusCode, headers: mapped.headers, body: JSON.stringify(mapped.body) };
    prepared.set(error, response);
  }
  return response;
}
