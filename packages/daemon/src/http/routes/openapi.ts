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

/** Where the served document's `servers` URL goes: the document is built once, the URL is per request. */
const SERVER_SLOT = 'sluice-served-address';

/**
 * `GET /openapi.json`: the OpenAPI 3.1 document of every route the server serves, generated from
 * the zod schemas the routes validate with. Built once, on the first request (its generator is a
 * chunk of its own, so a start pays nothing for it), behind the same gates as every route but
 * `/health`. Its `servers` entry is the address the request reached (a `Host` the gate let
 * through), so "try it" in a viewer calls this daemon whatever its port.
 */
export const OPENAPI_ROUTE = defineRoute(
  {
    method: 'GET',
    path: '/openapi.json',
    tag: 'discovery',
    summary: 'This API as an OpenAPI 3.1 document',
    description:
      'Generated from the schemas the routes validate with; built on the first request. `servers` names the address the request reached.',
    responses: {
      200: {
        description: 'An OpenAPI 3.1 document.',
        schema: OpenApiDocument,
        example: {
          openapi: '3.1.0',
          info: { title: 'Sluice', version: '0.1.0' },
          servers: [{ url: 'http://127.0.0.1:4170' }],
          paths: { '/health': { get: { operationId: 'get_health' } } },
        },
      },
    },
  },
  {
    handler: ({ routes }) => {
      // The JSON text before and after the server's URL.
      let document: Promise<[string, string]> | undefined;
      const load = (): Promise<[string, string]> =>
        (document ??= import('../openapi/openapi-document.js').then(
          (module) => {
            const server = { url: SERVER_SLOT, description: 'This daemon, as this request reached it' };
            const json = JSON.stringify(module.buildOpenApiDocument(daemonVersion(), routes, server));
            const at = json.indexOf(JSON.stringify(SERVER_SLOT));
            return [json.slice(0, at), json.slice(at + SERVER_SLOT.length + 2)];
          },
          (error: unknown) => {
            document = undefined;
            throw error;
          },
        ));
      return async (request, reply) => {
        const [head, tail] = await load();
        const url = JSON.stringify(`${request.protocol}://${request.host}`);
        return reply.type(JSON_CONTENT_TYPE).send(head + url + tail);
      };
    },
  },
);
