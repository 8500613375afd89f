import type { MetricDeclaration } from './prometheus-registry.js';

/** The command that writes `docs/reference/metrics.md` again from the registry. */
export const REGENERATE_METRICS_REFERENCE = 'npm run docs:metrics';

/** A table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/\|/g, '\\|').trim();
}

function row({ name, type, help, labelNames }: MetricDeclaration): string {
  const labels = labelNames.map((label) => `\`${label}\``).join(', ');
  return `| \`${name}\` | ${type} | ${labels} | ${cell(help)} |`;
}

/**
 * `docs/reference/metrics.md`: every metric the Prometheus registry declares, in its order, with
 * its type, labels and help text. Generated (`npm run docs:metrics`); a test fails when it is stale.
 */
export function renderMetricsReference(declarations: readonly MetricDeclaration[]): string {
  return [
    '# Metrics reference',
    '',
    `<!-- Generated from the Prometheus registry (packages/daemon/src/observe/prometheus-registry.ts) by \`${REGENERATE_METRICS_REFERENCE}\`; do not edit. -->`,
    '',
    "`GET /metrics` answers these in the Prometheus text format, plus prom-client's process",
    'defaults (`process_*`, `nodejs_*`: CPU, memory, event-loop lag, GC, handles). How to scrape',
    'them, how labels are bounded and what the dashboard shows: [operations](../operations.md#metrics).',
    'No metric or label carries prompt text.',
    '',
    '| metric | type | labels | what |',
    '| ------ | ---- | ------ | ---- |',
    ...declarations.map(row),
    '',
  ].join('\n');
}
