import type { FastifyRequest } from 'fastify';
import type * as z from 'zod/mini';
import { CodedError } from '@sluice/protocol';
import { parseInput, type InputIssue } from './parse-input.js';

/** Explains a failed field of an object body; `undefined` for an issue it does not own. */
export type FieldExplainer = (issue: InputIssue, body: Record<string, unknown>) => Error | undefined;

/** A body that is not a JSON object (PROTOCOL §1), whatever route it was sent to. */
export function invalidBody(): CodedError {
  return new CodedError('invalid_body', 'Request body must be a JSON object');
}

/**
 * The request body parsed with the route's object schema (an absent or `null` body is `{}`).
 * A body that is not an object is `400 invalid_body`; a bad field is the error `explain` makes
 * of it, with the route's stable code.
 */
export function parseBody<S extends z.ZodMiniType>(
  schema: S,
  request: FastifyRequest,
  explain: FieldExplainer,
): z.output<S> {
  const body: unknown = request.body ?? {};
  return parseInput(schema, body, (issue) =>
    issue.path.length === 0
      ? invalidBody()
      : (explain(issue, body as Record<string, unknown>) ?? invalidBody()),
  );
}
