import type { FastifyInstance } from 'fastify';
import type { AcpDaemon, AcpHttpHandlers, AcpHttpRegistryOptions } from '../../acp/index.js';

/**
 * Registers ACP over HTTP (PROTOCOL §8) on `/acp`, behind the same security gates as every
 * route. The ACP SDK — and zod, which it validates with — load on the first `/acp` request,
 * not at start-up: a daemon that serves only REST never pays for them (docs/decisions/009).
 */
export function acpRoutes(
  app: FastifyInstance,
  daemon: AcpDaemon,
  heartbeatMs: number,
  options: Partial<AcpHttpRegistryOptions> = {},
): void {
  let handlers: Promise<AcpHttpHandlers> | undefined;
  const load = (): Promise<AcpHttpHandlers> =>
    (handlers ??= import('../../acp/http/acp-http-handlers.js').then((module) =>
      module.createAcpHttpHandlers(app, daemon, heartbeatMs, options),
    ));
  app.addHook('preClose', async () => {
    if (handlers !== undefined) (await handlers).closeAll();
  });

  void app.register(async (scope) => {
    // JSON-RPC answers a malformed body itself (-32700), so this scope takes the raw text.
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) =>
      done(null, body),
    );
    scope.post('/acp', async (request, reply) => (await load()).post(request, reply));
    scope.get<{ Querystring: { maxQueued?: string } }>('/acp', async (request, reply) =>
      (await load()).get(request, reply),
    );
    scope.delete('/acp', async (request, reply) => (await load()).delete(request, reply));
  });
}
