import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createDaemon, type Daemon } from '../../src/daemon.js';
import { DaemonTap, REGENERATE_METRICS_REFERENCE, renderMetricsReference } from '../../src/observe/index.js';
import { createMetricsRegistry, type MetricsRegistry } from '../../src/observe/prometheus-registry.js';

const REFERENCE = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../docs/reference/metrics.md');

let dataDir: string;
let daemon: Daemon;
let registry: MetricsRegistry;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'sluice-metrics-reference-'));
  const tap = new DaemonTap();
  daemon = createDaemon({ dataDir, workspace: dataDir, drainTimeoutMs: 0 }, { tap });
  const { runtime, models, bridge, agentPool } = daemon;
  registry = createMetricsRegistry({ tap, runtime, models, bridge, agentPool });
});

afterAll(async () => {
  await daemon.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test('docs/reference/metrics.md is the metrics registry as it is now', () => {
  expect(
    readFileSync(REFERENCE, 'utf8') === renderMetricsReference(registry.declarations()),
    `docs/reference/metrics.md is stale: run \`${REGENERATE_METRICS_REFERENCE}\` and commit it`,
  ).toBe(true);
});

test('every sluice_ metric a scrape answers has a row in the metrics reference', async () => {
  const scraped = new Set(
    [...(await registry.metrics()).matchAll(/^# TYPE (sluice_\w+) /gm)].map((match) => match[1]!),
  );
  const text = renderMetricsReference(registry.declarations());
  expect(scraped.size).toBeGreaterThan(30);
  for (const name of scraped) expect(text, name).toContain(`| \`${name}\` |`);
  expect(text).toContain('| `sluice_prompts_refused_total` | counter | `code` |');
});
