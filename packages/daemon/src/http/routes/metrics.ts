import * as z from 'zod/mini';
import type { MetricsRegistry } from '../../observe/index.js';
import { defineRoute, present } from '../route.js';

/**
 * `GET /metrics`: the daemon's metrics in the Prometheus text format (docs/operations.md), behind
 * the same gates as the API. prom-client is loaded by the first scrape, not at start-up.
 */
export const METRICS_ROUTE = defineRoute(
  {
    method: 'GET',
    path: '/metrics',
    tag: 'operations',
    summary: 'Prometheus metrics (text exposition format)',
    description:
      'Sessions, prompts, refusals by code, model calls and their phases, the journal and the process, for a Prometheus scrape; no prompt text in any label. Not served with `--no-metrics`; never rate limited.',
    metrics: true,
    rateLimit: 'exempt',
    responses: {
      200: {
        description: 'The metrics; docs/reference/metrics.md lists them.',
        schema: z.string(),
        contentType: 'text/plain',
        example:
          '# HELP sluice_sessions_live Live sessions.\n# TYPE sluice_sessions_live gauge\nsluice_sessions_live 1\n',
      },
    },
  },
  {
    handler: ({ observed }) => {
      const source = present(observed, 'the daemon tap');
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
      return async (_request, reply) => {
        const metrics = await (registry ??= load());
        const text = await metrics.metrics();
        return reply.header('Cache-Control', 'no-store').type(metrics.contentType).send(text);
      };
    },
  },
);
