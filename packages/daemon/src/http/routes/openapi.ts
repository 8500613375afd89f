import type { FastifyInstance } from 'fastify';
import { daemonVersion } from '../../version.js';
import { JSON_CONTENT_TYPE } from '../prepared-error.js';

/**
 * `GET /openapi.json`: the OpenAPI 3.1 document of every route, generated from the zod schemas
 * the routes validate with. Built once, on the first request (its generator is a chunk of its
 * own, so a start pays nothing for it), behind the same gates as every route but `/health`.
 */
export function openApiRoutes(app: FastifyInstance, metrics: boolean): void {
  let document: Promise<string> | undefined;
  const load = (): Promise<string> =>
    (document ??= import('../openapi/openapi-document.js').then(
      (module) =>
        JSON.stringify(module.buildOpenApiDocument(daemonVersion(), module.servedRouteDocs(metrics))),
      (error: unknown) => {
        document = undefined;
        throw error;
      },
    ));
  app.get('/openapi.json', async (_request, reply) => reply.type(JSON_CONTENT_TYPE).send(await load()));
}
