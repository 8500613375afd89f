import type { FastifyInstance } from 'fastify';
import type { MetricsRegistry, ObservedDaemon } from '../../observe/index.js';

/**
 * `GET /metrics`: the daemon's metrics in the Prometheus text format (docs/metrics.md), behind
 * the same gates as the API. prom-client is loaded by the first scrape, not at start-up.
 */
export function metricsRoutes(app: FastifyInstance, source: ObservedDaemon): void {
  let registry: Promise<MetricsRegistry> | undefined;
  const load = (): Promise<MetricsRegistry> => {
    // The registry module is observe/'s lazy entry point (like `@sluice/runtime/openai`): the
    // index exports its type only, so that the start never loads prom-client.
    const loading = import('../../observe/prometheus-registry.js').then(({ createMetricsRegistry }) =>
      createMetricsRegistry(source),
    );
    // A failed load is tried again by the next scrape rather than remembered.
    loading.catch(() => {
      if (registry === loading) registry = undefined;
    });
    return loading;
  };
  app.get('/metrics', async (_request, reply) => {
    const metrics = await (registry ??= load());
    const text = await metrics.metrics();
    return reply.header('Cache-Control', 'no-store').type(metrics.contentType).send(text);
  });
}
