import { Redis } from 'ioredis';
import { afterEach, expect, test, vi } from 'vitest';
import { MemoryJournal, SharedModelRuntime } from '@sluice/runtime';
import { ScriptedProvider } from '../../../runtime/test/helpers/scripted-provider.js';
import { RedisCapacity, fleetPrefix, poolPrefix } from '../../src/index.js';
import { REDIS_URL, REDIS_WAIT, deleteFleet, randomFleetName } from './helpers/fleet-scripts.js';
import { TcpProxy } from './helpers/tcp-proxy.js';

// A real outage: the node reaches Redis through a proxy that the test cuts and restores.
const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

test('a release that could not reach Redis is sent once it answers again: the slot is freed exactly once', async () => {
  const fleetName = randomFleetName();
  const target = new URL(REDIS_URL);
  const proxy = new TcpProxy(target.hostname, Number(target.port || 6379));
  const port = await proxy.listen();
  const direct = new Redis(REDIS_URL);
  cleanup.push(async () => {
    await deleteFleet(direct, fleetName);
    direct.disconnect();
  });
  const capacity = new RedisCapacity({
    url: `redis://127.0.0.1:${port}`,
    fleetName,
    onOutage: 'local',
    commandTimeoutMs: 300,
    leaseTtlMs: 60_000,
  });
  expect(await capacity.connected(5_000)).toBe(true);
  const provider = new ScriptedProvider();
  const runtime = new SharedModelRuntime({
    provider,
    journal: new MemoryJournal(),
    capacity,
    scheduler: { maxConcurrency: 2, maxQueued: 2, maxInflight: 8 },
  });
  cleanup.push(async () => {
    for (const call of provider.calls) if (!call.settled) call.succeed();
    await proxy.listen();
    await runtime.shutdown({ abortRunning: true });
    await proxy.cut();
  });
  const pool = `${poolPrefix(fleetPrefix(fleetName), 'scripted/scripted-1')}`;
  const request = { messages: [{ role: 'user' as const, content: 'hi' }] };

  const shared = runtime.complete(request);
  await vi.waitFor(() => expect(provider.calls.length).toBe(1), REDIS_WAIT);
  expect(await direct.hget(`${pool}meta`, 'used')).toBe('1');

  await proxy.cut();
  await vi.waitFor(() => expect(runtime.schedulerSnapshot().fleet?.mode).toBe('local'), REDIS_WAIT);
  provider.calls[0]!.succeed('done while cut off');
  await expect(shared).resolves.toMatchObject({ text: 'done while cut off' });
  // Still held in Redis: nothing could tell it.
  expect(await direct.hlen(`${pool}leases`)).toBe(1);

  // Meanwhile this node admits on its share of the limits.
  const local = runtime.complete(request);
  await vi.waitFor(() => expect(provider.calls.length).toBe(2), REDIS_WAIT);
  provider.calls[1]!.succeed('local');
  await expect(local).resolves.toMatchObject({ text: 'local' });

  await proxy.listen();
  await vi.waitFor(() => expect(runtime.schedulerSnapshot().fleet?.mode).toBe('shared'), { timeout: 10_000 });
  await vi.waitFor(async () => expect(await direct.hlen(`${pool}leases`)).toBe(0), { timeout: 10_000 });
  expect(await direct.hget(`${pool}meta`, 'used')).toBe('0');
});
