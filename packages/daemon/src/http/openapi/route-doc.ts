import type * as z from 'zod/mini';
import { ErrorBody } from '../schemas/common-schemas.js';
import { SESSION_NOT_FOUND_EXAMPLE } from './route-examples.js';

/** HTTP methods of the daemon's routes. */
export type RouteMethod = 'GET' | 'POST' | 'DELETE';

/**
 * The rate-limit tiers of `--rate-limit` (docs/security.md): `prompt` (sending a prompt),
 * `mutation` (any other change) and `read`. Each client has its own count in each tier.
 */
export const RATE_TIERS = ['prompt', 'mutation', 'read'] as const;
export type RateTier = (typeof RATE_TIERS)[number];

/** A response of one operation: JSON by default, or an SSE stream. */
export interface ResponseDoc {
  description: string;
  schema?: z.ZodMiniType;
  /** `application/json` unless given (`text/event-stream` for SSE). */
  contentType?: string;
  /** A `text/event-stream` the same status may answer with instead (a streamed completion). */
  stream?: z.ZodMiniType;
  /** An answer of this status, as `schema` reads it (`/docs` shows it; a test parses it). */
  example?: unknown;
}

/** A header an operation reads. */
export interface HeaderDoc {
  schema: z.ZodMiniType;
  required?: boolean;
}

/**
 * One route as the API document describes it: the zod schemas its handler validates with (path
 * parameters, query, body) and the shapes it answers with. `GET /openapi.json` is generated from
 * a table of these; a test holds the table to the routes the server registers.
 */
export interface RouteDoc {
  method: RouteMethod;
  /** fastify's path syntax (`/session/:id`). */
  path: string;
  summary: string;
  /** Longer text: what it is for, rules, error codes, where docs/protocol.md tells more. */
  description: string;
  tag: 'discovery' | 'sessions' | 'prompts' | 'events' | 'permissions' | 'gateway' | 'acp' | 'operations';
  params?: z.ZodMiniObject;
  query?: z.ZodMiniObject;
  headers?: Record<string, HeaderDoc>;
  /** The body, with an example request `schema` accepts (`/docs` shows it; a test parses it). */
  body?: { schema: z.ZodMiniType; required: boolean; contentType?: string; example?: unknown };
  responses: Record<number, ResponseDoc>;
  /** Needs no token on a loopback bind unless `--require-auth` (`/health`). */
  openOnLoopback?: boolean;
  /**
   * The rate-limit tier the route counts in, when it is not the one of its method (`GET`: `read`,
   * any other: `mutation`); `exempt` for routes `--rate-limit` never refuses (docs/decisions/035).
   */
  rateLimit?: RateTier | 'exempt';
}

/** The tier `route` counts in under `--rate-limit`, or undefined when it is exempt. */
export function rateTierOf(route: Pick<RouteDoc, 'method' | 'rateLimit'>): RateTier | undefined {
  if (route.rateLimit === 'exempt') return undefined;
  return route.rateLimit ?? (route.method === 'GET' ? 'read' : 'mutation');
}

/** `400` of a route that validates input: the stable codes it may answer with. */
export function badInput(codes: readonly string[]): ResponseDoc {
  return { description: `Bad input: ${codes.map((code) => `\`${code}\``).join(', ')}.`, schema: ErrorBody };
}

/** `404` of a session route (PROTOCOL §1). */
export const SESSION_NOT_FOUND: ResponseDoc = {
  description: '`session_not_found` or `session_closing`: no such live session.',
  schema: ErrorBody,
  example: SESSION_NOT_FOUND_EXAMPLE,
};

/** `503` of a refusal under load, with `Retry-After`. */
export function overloaded(codes: readonly string[]): ResponseDoc {
  return {
    description: `Refused for now (${codes.map((code) => `\`${code}\``).join(', ')}); retry after \`Retry-After\` seconds.`,
    schema: ErrorBody,
  };
}
