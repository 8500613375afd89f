// Writes docs/reference/metrics.md from the Prometheus registry of the built daemon (`npm run
// docs:metrics` builds first): the registry of a daemon made for the purpose in a scratch data
// directory, never started. packages/daemon/test/observe/metrics-reference.test.ts checks it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDaemon } from '../packages/daemon/dist/daemon.js';
import { DaemonTap, renderMetricsReference } from '../packages/daemon/dist/observe/index.js';
import { createMetricsRegistry } from '../packages/daemon/dist/observe/prometheus-registry.js';

const target = resolve(dirname(fileURLToPath(import.meta.url)), '../docs/reference/metrics.md');
const dataDir = mkdtempSync(join(tmpdir(), 'sluice-metrics-reference-'));
const daemon = createDaemon({ dataDir, workspace: dataDir, drainTimeoutMs: 0 }, { tap: new DaemonTap() });
try {
  const { tap, runtime, models, bridge, agentPool } = daemon;
  const registry = createMetricsRegistry({ tap, runtime, models, bridge, agentPool });
  writeFileSync(target, renderMetricsReference(registry.declarations()));
  console.log(`wrote ${target}`);
} finally {
  await daemon.close();
  rmSync(dataDir, { recursive: true, force: true });
}
