import * as z from 'zod/mini';
import { daemonVersion } from '../../version.js';
import { JSON_CONTENT_TYPE } from '../prepared-error.js';
import { defineRoute } from '../route.js';

/** The OpenAPI document itself, loosely: its own schema is the OpenAPI 3.1 specification. */
const OpenApiDocument = z.looseObject({
  openapi: z.string(),
  info: z.looseObject({}),
  paths: z.looseObject({}),
});

/**
 * `GET /openapi.json`: the OpenAPI 3.1 document of every route the server serves, generated from
 * the zod schemas the routes validate with. Built once, on the first request (its generator is a
 * chunk of its own, so a start pays nothing for it), behind the same gates as every route but
 * `/health`.
 */
export const OPENAPI_ROUTE = defineRoute(
  {
    method: 'GET',
    path: '/openapi.json',
    tag: 'discovery',
    summary: 'This API as an OpenAPI 3.1 document',
    description: 'Generated from the schemas the routes validate with; built on the first request.',
    responses: { 200: { description: 'An OpenAPI 3.1 document.', schema: OpenApiDocument } },
  },
  {
    handler: ({ routes }) => {
      let document: Promise<string> | undefined;
      const load = (): Promise<string> =>
        (document ??= import('../openapi/openapi-document.js').then(
          (module) => JSON.stringify(module.buildOpenApiDocument(daemonVersion(), routes)),
          (error: unknown) => {
            document = undefined;
            throw error;
          },
        ));
      return async (_request, reply) => reply.type(JSON_CONTENT_TYPE).send(await load());
    },
  },
);
