// The fleet section of `npm run bench`: model calls through the Redis capacity port
// (packages/fleet/src/redis) against the in-process scheduler, with 1–8 node processes on this
// machine sharing one Redis. Skipped, with a note, when Redis is not reachable.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { spawnNode } from './children.js';
import { fmt, met, table } from './lib.js';

const NODE = fileURLToPath(new URL('./fleet-node.js', import.meta.url));
const URL_ = process.env.SLUICE_BENCH_REDIS ?? 'redis://127.0.0.1:6379';
/** No call ever waits for a slot: what admission and release cost, not queueing. */
const UNCONTENDED = { maxConcurrency: 100_000, maxQueued: 0, maxInflight: 100_000 };
/** Four slots for the whole fleet: every call but four waits, and grants cross nodes. */
const CONTENDED = { maxConcurrency: 4, maxQueued: 10_000, maxInflight: 10_000 };

/** Runs `nodes` node processes together for `seconds` and sums their figures. */
async function run({ mode, nodes, depth, limits, seconds, fleetName }) {
  const startAt = Date.now() + 1_500 + nodes * 300; // time to start every process and warm up
  const endAt = startAt + seconds * 1_000;
  const config = { mode, url: URL_, fleetName, depth, startAt, endAt, limits };
  const children = Array.from({ length: nodes }, () => spawnNode([NODE, JSON.stringify(config)]));
  const results = await Promise.all(
    children.map(async (child) => {
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk));
      const code = await child.exited;
      if (code !== 0) throw new Error(`fleet node exited with ${code}: ${child.stderrTail()}`);
      return JSON.parse(out.trim().split('\n').at(-1));
    }),
  );
  const calls = results.reduce((sum, r) => sum + r.calls, 0);
  const perSecond = results.reduce((sum, r) => sum + r.calls / r.seconds, 0);
  const byCalls = (key) => results.reduce((sum, r) => sum + r[key] * r.calls, 0) / Math.max(1, calls);
  return {
    calls,
    perSecond,
    meanMs: byCalls('meanMs'),
    p50Ms: byCalls('p50Ms'),
    p99Ms: Math.max(...results.map((r) => r.p99Ms)),
  };
}

async function scriptCalls(redis) {
  const stats = await redis.info('commandstats');
  let calls = 0;
  for (const match of stats.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)) calls += Number(match[1]);
  return calls;
}

async function reachable() {
  const redis = new Redis(URL_, {
    lazyConnect: true,
    connectTimeout: 1_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return redis;
  } catch {
    redis.disconnect();
    return undefined;
  }
}

/** The fleet bench; `markdown` is its BENCHMARKS.md section. */
export async function benchFleet({ quick = false } = {}) {
  const redis = await reachable();
  if (redis === undefined)
    return { markdown: `Skipped: no Redis answered at ${URL_} (set SLUICE_BENCH_REDIS to point at one).` };
  const seconds = quick ? 1 : 3;
  const counts = quick ? [1, 4] : [1, 2, 4, 8];
  const fleet = () => `bench-${randomBytes(4).toString('hex')}`;
  try {
    // Latency: one call at a time on one node.
    const local1 = await run({ mode: 'local', nodes: 1, depth: 1, limits: UNCONTENDED, seconds });
    const redis1 = await run({
      mode: 'redis',
      nodes: 1,
      depth: 1,
      limits: UNCONTENDED,
      seconds,
      fleetName: fleet(),
    });
    // Throughput: 64 calls outstanding per node, no call waits for a slot.
    const localMany = await run({ mode: 'local', nodes: 1, depth: 64, limits: UNCONTENDED, seconds });
    const rows = [];
    let best = 0;
    let scriptsPerCall = 0;
    for (const nodes of counts) {
      const before = await scriptCalls(redis);
      const result = await run({
        mode: 'redis',
        nodes,
        depth: 64,
        limits: UNCONTENDED,
        seconds,
        fleetName: fleet(),
      });
      scriptsPerCall = Math.max(scriptsPerCall, ((await scriptCalls(redis)) - before) / result.calls);
      best = Math.max(best, result.perSecond);
      rows.push([
        `${nodes}`,
        fmt(result.perSecond),
        `${fmt(result.perSecond / localMany.perSecond, 2)}×`,
        fmt(result.p50Ms, 2),
        fmt(result.p99Ms, 2),
      ]);
    }
    // Contention: four slots for the whole fleet.
    const localContended = await run({ mode: 'local', nodes: 1, depth: 16, limits: CONTENDED, seconds });
    const contended = [];
    for (const nodes of quick ? [4] : [2, 8]) {
      const result = await run({
        mode: 'redis',
        nodes,
        depth: 16,
        limits: CONTENDED,
        seconds,
        fleetName: fleet(),
      });
      contended.push([
        `${nodes} nodes, 4 slots fleet-wide`,
        fmt(result.perSecond),
        `${fmt(result.perSecond / localContended.perSecond, 2)}×`,
        fmt(result.p50Ms, 2),
        fmt(result.p99Ms, 2),
      ]);
    }
    const added = (redis1.meanMs - local1.meanMs) * 1_000;
    const markdown = [
      `Model calls (echo model, in-memory journal) through \`ModelRuntime.complete\` with the limits in process, against \`SharedModelRuntime.complete\` with the same limits shared through Redis (\`RedisCapacity\`: the transitions a node issues in a pool within one tick go as one Lua script run), each node a process of its own on this machine, all sharing the one Redis at ${URL_} — which runs on the same 2 cores. Every call is one admission, one leave (the slot given back, SCH-5) and one release — with this journal, which confirms at once, leave and release travel together: two round trips a call; ${seconds} s measured per run after a warm-up.`,
      '',
      `**Added latency** (one call at a time, one node): in process **${fmt(local1.meanMs * 1_000, 1)} µs** a call, through Redis **${fmt(redis1.meanMs * 1_000, 1)} µs** (p50 ${fmt(redis1.p50Ms * 1_000, 0)} µs, p99 ${fmt(redis1.p99Ms * 1_000, 0)} µs): **${fmt(added, 0)} µs** added per call: two round trips to a Redis on loopback, on a machine whose two cores the bench, Redis and other work share.`,
      '',
      `**Fleet admissions per second** (64 calls outstanding per node, no call waits for a slot): against one in-process runtime at ${fmt(localMany.perSecond)} calls/s.`,
      '',
      table(['nodes', 'fleet calls/s', 'vs in process', 'p50 ms', 'p99 ms'], rows),
      '',
      `**Contended** (16 outstanding per node, 4 slots fleet-wide: every grant crosses the fleet through a release and the owner's channel), against one in-process runtime with 4 slots at ${fmt(localContended.perSecond)} calls/s:`,
      '',
      table(['subject', 'fleet calls/s', 'vs in process', 'p50 ms', 'p99 ms'], contended),
      '',
      `Targets: ≤ 1 Redis round trip per admission and per release — each in exactly one script run, shared with the node's other transitions of that tick (${fmt(scriptsPerCall, 3)} script runs per call counted by Redis's \`commandstats\` in the busiest run, renewals included; that each transition is sent once, the admission alone in its run, is asserted by \`packages/fleet/test/redis/redis-capacity.test.ts\` through \`MONITOR\`), met; ≥ 10,000 fleet admissions per second on one Redis — **${fmt(best)}**, ${met(best >= 10_000)}.`,
    ].join('\n');
    return { markdown, best, addedUs: added };
  } finally {
    redis.disconnect();
  }
}
