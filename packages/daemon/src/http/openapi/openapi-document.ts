import * as z from 'zod/mini';
import { ErrorBody } from '../schemas/common-schemas.js';
import { rateTierOf, type ResponseDoc, type RouteDoc } from './route-doc.js';

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1) as zod writes it. */
type JsonSchema = Record<string, unknown>;

const TAGS = [
  ['discovery', 'Health, capabilities, the scheduler snapshot and this document (PROTOCOL §3).'],
  ['sessions', 'Create, restore, list, branch and close sessions (PROTOCOL §4, §7).'],
  ['prompts', 'Prompt admission and the pending-prompt queue (PROTOCOL §5).'],
  ['events', "A session's server-sent event stream with replay (PROTOCOL §6)."],
  ['permissions', 'Votes on permission requests, first responder wins (PROTOCOL §7).'],
  ['gateway', "The OpenAI-compatible model gateway and a prompt's model calls."],
  ['acp', 'ACP (Agent Client Protocol) JSON-RPC over HTTP (PROTOCOL §8).'],
  ['operations', 'Durable budgets, run reports, the operator overview, metrics and the dashboard.'],
] as const;

const DESCRIPTION =
  'Sluice serves AI agent sessions to many clients, wire-compatible with `qwen serve` (REST + SSE) ' +
  'and ACP over HTTP. Errors are `{error, code?, ...details}` with a stable `code`. A daemon bound ' +
  'to loopback without a token is open; otherwise every route but `/health` (open on loopback ' +
  'unless `--require-auth`) needs `Authorization: Bearer <token>`. Browsers must come from an ' +
  'allowed `Origin`, and loopback binds check `Host`.';

/** The JSON Schema of a zod schema, as it is read (`input`) or as it is sent (`output`). */
function jsonSchema(schema: z.ZodMiniType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io }) as JsonSchema;
  return rest;
}

/** OpenAPI parameters from the properties of an object schema. */
function parameters(location: 'path' | 'query', schema: z.ZodMiniObject | undefined): JsonSchema[] {
  if (schema === undefined) return [];
  const json = jsonSchema(schema, 'input');
  const properties = (json['properties'] ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json['required'] ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || required.has(name),
    schema: property,
  }));
}

function headerParameters(route: RouteDoc): JsonSchema[] {
  return Object.entries(route.headers ?? {}).map(([name, header]) => ({
    name,
    in: 'header',
    required: header.required === true,
    schema: jsonSchema(header.schema, 'input'),
  }));
}

function response(doc: ResponseDoc): JsonSchema {
  const content: Record<string, JsonSchema> = {};
  const example = doc.example === undefined ? {} : { example: doc.example };
  if (doc.schema !== undefined)
    content[doc.contentType ?? 'application/json'] = { schema: jsonSchema(doc.schema, 'output'), ...example };
  if (doc.stream !== undefined) content['text/event-stream'] = { schema: jsonSchema(doc.stream, 'output') };
  return Object.keys(content).length === 0
    ? { description: doc.description }
    : { description: doc.description, content };
}

/** `POST /session/:id/prompt` → `post_session_id_prompt`. */
function operationId(route: RouteDoc): string {
  const words = route.path.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
  return [route.method.toLowerCase(), ...words].join('_');
}

function operation(route: RouteDoc): JsonSchema {
  const params = [
    ...parameters('path', route.params),
    ...parameters('query', route.query),
    ...headerParameters(route),
  ];
  const responses: Record<string, JsonSchema> = {};
  for (const [status, doc] of Object.entries(route.responses)) responses[status] = response(doc);
  responses['401'] ??= { $ref: '#/components/responses/Unauthorized' };
  responses['403'] ??= { $ref: '#/components/responses/Forbidden' };
  const tier = rateTierOf(route);
  if (tier !== undefined) responses['429'] ??= { $ref: '#/components/responses/RateLimited' };
  return {
    operationId: operationId(route),
    tags: [route.tag],
    summary: route.summary,
    description: route.description,
    ...(params.length === 0 ? {} : { parameters: params }),
    ...(route.body === undefined
      ? {}
      : {
          requestBody: {
            required: route.body.required,
            content: {
              [route.body.contentType ?? 'application/json']: {
                schema: jsonSchema(route.body.schema, 'input'),
                ...(route.body.example === undefined ? {} : { example: route.body.example }),
              },
            },
          },
        }),
    responses,
    ...(tier === undefined ? {} : { 'x-sluice-rate-tier': tier }),
    ...(route.openOnLoopback === true ? { security: [{}, { bearer: [] }] } : {}),
  };
}

/**
 * The OpenAPI 3.1 document of `routes`: every path and method, with parameters, bodies and
 * responses generated from the zod schemas the routes validate with (`GET /openapi.json`).
 * `server` is the address its `servers` entry names: the one a request reached (the route), or
 * the default bind (the generated reference).
 */
export function buildOpenApiDocument(
  version: string,
  routes: readonly RouteDoc[],
  server: { url: string; description: string } = {
    url: 'http://127.0.0.1:4170',
    description: 'The default bind',
  },
): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:([A-Za-z]+)/g, '{$1}');
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route);
  }
  const error = { 'application/json': { schema: jsonSchema(ErrorBody, 'output') } };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Sluice',
      version,
      description: DESCRIPTION,
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [server],
    tags: TAGS.map(([name, description]) => ({ name, description })),
    security: [{ bearer: [] }, {}],
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: '`--token`, `SLUICE_TOKEN` or `QWEN_SERVER_TOKEN`.',
        },
      },
      responses: {
        Unauthorized: {
          description: 'Missing or wrong bearer token (`{"error":"Unauthorized"}`).',
          content: error,
        },
        Forbidden: { description: 'Refused by the Host or Origin check.', content: error },
        RateLimited: {
          description:
            "`rate_limit_exceeded`, with `--rate-limit`: this client's requests of the operation's " +
            'tier (`x-sluice-rate-tier`) are spent for the window; the body names the tier, its ' +
            '`limit`, `windowMs` and `retryAfterMs`; retry after `Retry-After` seconds.',
          headers: { 'Retry-After': { schema: { type: 'integer', minimum: 1 } } },
          content: error,
        },
      },
    },
  };
}
