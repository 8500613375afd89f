// One node of the fleet bench (bench/fleet.js), in a process of its own: a ModelRuntime with the
// echo model and an in-memory journal, its limits in process or shared through Redis, driven in
// a closed loop until a common deadline. Prints one JSON line: calls, seconds, latency quantiles.
// Usage: node bench/fleet-node.js '<json config>'
import {
  EchoProvider,
  MemoryJournal,
  ModelRuntime,
  SharedModelRuntime,
} from '../packages/runtime/dist/index.js';
import { RedisCapacity } from '../packages/fleet/dist/redis/index.js';

const config = JSON.parse(process.argv[2]);
const { mode, url, fleetName, depth, startAt, endAt, limits } = config;

const capacity =
  mode === 'redis'
    ? new RedisCapacity({ url, fleetName, leaseTtlMs: 3_000, commandTimeoutMs: 5_000 })
    : undefined;
if (capacity !== undefined && !(await capacity.connected(5_000)))
  throw new Error(`Redis at ${url} is unreachable`);
const options = {
  provider: new EchoProvider(),
  journal: new MemoryJournal({ maxRecords: 4_096, whenFull: 'evict' }),
  scheduler: limits,
};
const runtime =
  capacity === undefined ? new ModelRuntime(options) : new SharedModelRuntime({ ...options, capacity });
const request = { messages: [{ role: 'user', content: 'ping' }] };

// Latencies of up to 200,000 calls, for the quantiles.
const samples = new Float64Array(200_000);
let calls = 0;
let measuring = false;
let measuredFrom = 0;

async function worker() {
  for (;;) {
    const now = Date.now();
    if (now >= endAt) return;
    if (!measuring && now >= startAt) {
      measuring = true;
      measuredFrom = performance.now();
    }
    const started = performance.now();
    await runtime.complete(request);
    if (measuring) {
      if (calls < samples.length) samples[calls] = performance.now() - started;
      calls++;
    }
  }
}

// Everyone waits for the common start; calls before it warm up and are not counted.
await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - 1_000 - Date.now())));
await Promise.all(Array.from({ length: depth }, worker));
const seconds = (performance.now() - measuredFrom) / 1_000;
const sorted = samples.slice(0, Math.min(calls, samples.length)).sort();
const quantile = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const mean = sorted.reduce((sum, x) => sum + x, 0) / Math.max(1, sorted.length);
process.stdout.write(
  `${JSON.stringify({ calls, seconds, meanMs: mean, p50Ms: quantile(0.5), p99Ms: quantile(0.99) })}\n`,
);
await runtime.shutdown();
