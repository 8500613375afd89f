import { Redis } from 'ioredis';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { MemoryJournal, OverloadedError, SharedModelRuntime, type ModelRuntimeError } from '@sluice/runtime';
import { ScriptedProvider } from '../../../runtime/test/helpers/scripted-provider.js';
import { RedisCapacity } from '../../src/index.js';
import { REDIS_URL, REDIS_WAIT, deleteFleet, randomFleetName } from './helpers/fleet-scripts.js';
import { RedisMonitor } from './helpers/redis-monitor.js';

// The Redis capacity port inside real runtimes (the scheduler's shared path), against the real
// Redis: what a daemon of a fleet does for every model call.
interface Node {
  runtime: SharedModelRuntime;
  provider: ScriptedProvider;
  journal: MemoryJournal;
  capacity: RedisCapacity;
}

const fleets: string[] = [];
const nodes: Node[] = [];

async function node(
  fleetName: string,
  limits: { maxConcurrency: number; maxQueued: number; maxInflight?: number },
  options: { url?: string; onOutage?: 'local' | 'refuse' } = {},
): Promise<Node> {
  const capacity = new RedisCapacity({
    url: options.url ?? REDIS_URL,
    fleetName,
    onOutage: options.onOutage ?? 'local',
    commandTimeoutMs: 500,
  });
  await capacity.connected(options.url === undefined ? 5_000 : 50);
  const provider = new ScriptedProvider();
  const journal = new MemoryJournal();
  const runtime = new SharedModelRuntime({
    provider,
    journal,
    capacity,
    scheduler: { maxInflight: 64, ...limits },
  });
  const created = { runtime, provider, journal, capacity };
  nodes.push(created);
  return created;
}

function fleet(): string {
  const name = randomFleetName();
  fleets.push(name);
  return name;
}

afterEach(async () => {
  for (const { runtime, provider } of nodes.splice(0)) {
    for (const call of provider.calls) if (!call.settled) call.succeed();
    await runtime.shutdown({ abortRunning: true });
  }
  const redis = new Redis(REDIS_URL);
  for (const name of fleets.splice(0)) await deleteFleet(redis, name);
  redis.disconnect();
});

const request = { messages: [{ role: 'user' as const, content: 'hi' }] };

describe('RedisCapacity in the model runtime', () => {
  test('two daemons share maxConcurrency: the third call waits for a slot freed on the other node', async () => {
    const name = fleet();
    const a = await node(name, { maxConcurrency: 2, maxQueued: 4 });
    const b = await node(name, { maxConcurrency: 2, maxQueued: 4 });
    const first = a.runtime.complete(request);
    const second = b.runtime.complete(request);
    await vi.waitFor(() => expect(a.provider.calls.length + b.provider.calls.length).toBe(2), REDIS_WAIT);
    const third = b.runtime.complete(request);
    await vi.waitFor(() => expect(b.runtime.schedulerSnapshot().queued).toBe(1), REDIS_WAIT);
    expect(b.provider.calls.length).toBe(1);
    a.provider.calls[0]!.succeed('one');
    await expect(first).resolves.toMatchObject({ text: 'one' });
    await vi.waitFor(() => expect(b.provider.calls.length).toBe(2), REDIS_WAIT);
    b.provider.calls[0]!.succeed('two');
    b.provider.calls[1]!.succeed('three');
    await expect(second).resolves.toMatchObject({ text: 'two' });
    await expect(third).resolves.toMatchObject({ text: 'three' });
  });

  test('a full fleet queue refuses with a typed QueueFull and records nothing', async () => {
    const name = fleet();
    const a = await node(name, { maxConcurrency: 1, maxQueued: 1 });
    const b = await node(name, { maxConcurrency: 1, maxQueued: 1 });
    a.runtime.complete(request).catch(() => {});
    a.runtime.complete(request).catch(() => {});
    await vi.waitFor(() => expect(a.runtime.schedulerSnapshot().inflight).toBe(2), REDIS_WAIT);
    const refused = await b.runtime.complete(request).catch((error: ModelRuntimeError) => error);
    expect(refused).toBeInstanceOf(OverloadedError);
    expect(refused).toMatchObject({ code: 'model_overloaded', capacity: 'QueueFull', limit: 1 });
    expect((refused as OverloadedError).retryAfterMs).toBeGreaterThanOrEqual(1_000);
    expect(b.journal.records()).toEqual([]);
  });

  test('a refused stream ends with the error before any event', async () => {
    const name = fleet();
    const a = await node(name, { maxConcurrency: 1, maxQueued: 0 });
    a.runtime.complete(request).catch(() => {});
    await vi.waitFor(() => expect(a.provider.calls.length).toBe(1), REDIS_WAIT);
    const stream = a.runtime.stream(request);
    await expect(stream[Symbol.asyncIterator]().next()).rejects.toMatchObject({ capacity: 'QueueFull' });
  });

  test('SCH-15 a queued call that is cancelled gives its fleet queue place back', async () => {
    const name = fleet();
    const a = await node(name, { maxConcurrency: 1, maxQueued: 1 });
    a.runtime.complete(request).catch(() => {});
    const controller = new AbortController();
    const queued = a.runtime.complete(request, { signal: controller.signal });
    await vi.waitFor(() => expect(a.runtime.schedulerSnapshot().queued).toBe(1), REDIS_WAIT);
    controller.abort();
    await expect(queued).rejects.toMatchObject({ code: 'model_cancelled' });
    // The queue place is free again fleet-wide: another node can queue.
    const b = await node(name, { maxConcurrency: 1, maxQueued: 1 });
    const next = b.runtime.complete(request);
    await vi.waitFor(() => expect(b.runtime.schedulerSnapshot().queued).toBe(1), REDIS_WAIT);
    a.provider.calls[0]!.succeed();
    await vi.waitFor(() => expect(b.provider.calls.length).toBe(1), REDIS_WAIT);
    b.provider.calls[0]!.succeed('after');
    await expect(next).resolves.toMatchObject({ text: 'after' });
  });

  test('a call naming another model counts against the daemon pool: naming models opens no new limits', async () => {
    const a = await node(fleet(), { maxConcurrency: 1, maxQueued: 1 });
    a.runtime.complete(request, { model: 'some-other-model' }).catch(() => {});
    await vi.waitFor(() => expect(a.provider.calls.length).toBe(1), REDIS_WAIT);
    a.runtime.complete(request, { model: 'a-third-model' }).catch(() => {});
    await vi.waitFor(() => expect(a.runtime.schedulerSnapshot().queued).toBe(1), REDIS_WAIT);
    expect(a.provider.calls.length).toBe(1);
    expect(a.runtime.pool).toBe('scripted/scripted-1');
  });

  test('the snapshot shows the fleet: shared mode, this node, the live node count', async () => {
    const name = fleet();
    const a = await node(name, { maxConcurrency: 1, maxQueued: 1 });
    await node(name, { maxConcurrency: 1, maxQueued: 1 });
    await vi.waitFor(() => expect(a.runtime.schedulerSnapshot().fleet?.nodes).toBe(2), { timeout: 5_000 });
    expect(a.runtime.schedulerSnapshot().fleet).toMatchObject({
      backend: 'redis',
      fleetName: name,
      nodeId: a.capacity.nodeId,
      mode: 'shared',
      connected: true,
    });
  });

  test('one Redis round trip per admission and at most one per leave and release', async () => {
    const name = fleet();
    const a = await node(name, { maxConcurrency: 1, maxQueued: 1 });
    const warmUp = a.runtime.complete(request); // the first use of a script may load it
    await vi.waitFor(() => expect(a.provider.calls.length).toBe(1), REDIS_WAIT);
    a.provider.calls[0]!.succeed();
    await warmUp;
    const port = a.capacity.commandPort;
    const seen: string[][] = [];
    const monitor = await RedisMonitor.start(REDIS_URL, ({ args, source }) => {
      if (source.endsWith(`:${port}`)) seen.push(args);
    });
    const answer = a.runtime.complete(request);
    await vi.waitFor(() => expect(a.provider.calls.length).toBe(2), REDIS_WAIT);
    const callId = (a.provider.calls[1]!.options as unknown as { callId: string }).callId;
    const ofCall = (): string[][] => seen.filter((args) => args.includes(callId));
    // Each transition is sent once, as the kind before the lease id in a batch.
    const kinds = (args: string[]): string[] =>
      args.flatMap((arg, i) => (arg === callId ? [args[i - 1]!] : []));
    const transitions = (): string[] => ofCall().flatMap(kinds);
    // MONITOR reports on its own connection, later than the call starts: wait for the admission.
    await vi.waitFor(() => expect(transitions()).toEqual(['a']), REDIS_WAIT);
    a.provider.calls[1]!.succeed();
    await answer;
    await vi.waitFor(() => expect(transitions()).toEqual(['a', 'l', 'r']), REDIS_WAIT);
    monitor.stop();
    // Admission alone in one script run; leave (SCH-5) and release in at most one each — here the
    // in-memory journal confirms the result at once, so both share one run.
    expect(kinds(ofCall()[0]!)).toEqual(['a']);
    expect(ofCall().map((args) => args[0]!.toLowerCase())).toEqual(ofCall().map(() => 'evalsha'));
    expect(ofCall().length).toBeLessThanOrEqual(3);
  });
});

describe('RedisCapacity while Redis is unreachable', () => {
  const unreachable = 'redis://127.0.0.1:1';

  test('--fleet-on-outage refuse: calls are refused at once with model_overloaded', async () => {
    const a = await node(
      fleet(),
      { maxConcurrency: 2, maxQueued: 2 },
      { url: unreachable, onOutage: 'refuse' },
    );
    await expect(a.runtime.complete(request)).rejects.toMatchObject({
      code: 'model_overloaded',
      capacity: 'FleetUnavailable',
    });
    expect(a.runtime.schedulerSnapshot().fleet).toMatchObject({ mode: 'refusing', connected: false });
  });

  test('--fleet-on-outage local: this node applies the limits alone, FIFO and bounded', async () => {
    const a = await node(
      fleet(),
      { maxConcurrency: 1, maxQueued: 1 },
      { url: unreachable, onOutage: 'local' },
    );
    const first = a.runtime.complete(request);
    const second = a.runtime.complete(request);
    await vi.waitFor(() => expect(a.provider.calls.length).toBe(1), REDIS_WAIT);
    await expect(a.runtime.complete(request)).rejects.toMatchObject({ capacity: 'QueueFull' });
    expect(a.runtime.schedulerSnapshot().fleet).toMatchObject({
      mode: 'local',
      localLimits: { maxConcurrency: 1, maxQueued: 1, maxInflight: 64 },
    });
    a.provider.calls[0]!.succeed('first');
    await expect(first).resolves.toMatchObject({ text: 'first' });
    await vi.waitFor(() => expect(a.provider.calls.length).toBe(2), REDIS_WAIT);
    a.provider.calls[1]!.succeed('second');
    await expect(second).resolves.toMatchObject({ text: 'second' });
  });

  test('issue 26 item 7: calls that may wait, refused by the fleet, wait on their node in order; an outside call is refused', async () => {
    const name = fleet();
    const a = await node(name, { maxConcurrency: 1, maxQueued: 0 });
    const first = a.runtime.complete(request);
    await vi.waitFor(() => expect(a.provider.calls.length).toBe(1), REDIS_WAIT);
    const second = a.runtime.complete(request, { waitForCapacity: true });
    const third = a.runtime.complete(request, { waitForCapacity: true });
    await vi.waitFor(() => expect(a.runtime.schedulerSnapshot().waiting).toBe(2), REDIS_WAIT);
    await expect(a.runtime.complete(request)).rejects.toMatchObject({ capacity: 'QueueFull' });
    expect(a.journal.records()).toHaveLength(1);
    // This node gives its slot back: its longest waiter asks the fleet at once, not after Retry-After.
    a.provider.calls[0]!.succeed('first');
    await expect(first).resolves.toMatchObject({ text: 'first' });
    await vi.waitFor(() => expect(a.provider.calls.length).toBe(2), { timeout: 900 });
    a.provider.calls[1]!.succeed('second');
    await expect(second).resolves.toMatchObject({ text: 'second' });
    await vi.waitFor(() => expect(a.provider.calls.length).toBe(3), { timeout: 900 });
    a.provider.calls[2]!.succeed('third');
    await expect(third).resolves.toMatchObject({ text: 'third' });
    expect(a.runtime.schedulerSnapshot().waiting).toBe(0);
  });

  test('a waiting call on one node gets the slot another node frees, after the refusal’s Retry-After', async () => {
    const name = fleet();
    const a = await node(name, { maxConcurrency: 1, maxQueued: 0 });
    const b = await node(name, { maxConcurrency: 1, maxQueued: 0 });
    const first = a.runtime.complete(request);
    await vi.waitFor(() => expect(a.provider.calls.length).toBe(1), REDIS_WAIT);
    const host = new AbortController();
    const cancelled = b.runtime.complete(request, { waitForCapacity: true, signal: host.signal });
    const waiting = b.runtime.complete(request, { waitForCapacity: true });
    await vi.waitFor(() => expect(b.runtime.schedulerSnapshot().waiting).toBe(2), REDIS_WAIT);
    host.abort();
    await expect(cancelled).rejects.toMatchObject({ code: 'model_cancelled' });
    a.provider.calls[0]!.succeed('first');
    await expect(first).resolves.toMatchObject({ text: 'first' });
    await vi.waitFor(() => expect(b.provider.calls.length).toBe(1), { timeout: 3_000 });
    b.provider.calls[0]!.succeed('waited');
    await expect(waiting).resolves.toMatchObject({ text: 'waited' });
  });
});
