import { Redis } from 'ioredis';
import { afterEach, describe, expect, test } from 'vitest';
import { PoolScripts, REDIS_URL, randomFleetName, type PoolLimits } from './helpers/fleet-scripts.js';

// The capacity scripts against the real Redis, with an explicit clock: every transition of
// issue 21 (SCH semantics held fleet-wide) is one script call here.
const open: PoolScripts[] = [];
function pool(limits: Partial<PoolLimits> = {}, ttlMs = 3_000, fleet = randomFleetName()): PoolScripts {
  const scripts = new PoolScripts(
    fleet,
    { maxConcurrency: 2, maxQueued: 4, maxInflight: 8, ...limits },
    ttlMs,
  );
  open.push(scripts);
  return scripts;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((scripts) => scripts.close()));
});

describe('fleet capacity scripts', () => {
  test('free slots are granted at admission, later calls queue and get slots in FIFO order', async () => {
    const p = pool({ maxConcurrency: 2 });
    expect((await p.admit(0, 'a', 'c1'))[0]).toBe('granted');
    expect((await p.admit(0, 'b', 'c2'))[0]).toBe('granted');
    expect((await p.admit(1, 'b', 'c3'))[0]).toBe('queued');
    expect((await p.admit(2, 'a', 'c4'))[0]).toBe('queued');
    expect(await p.release(3, 'c2')).toEqual(['c3']);
    expect(await p.leave(4, 'c1')).toEqual(['c4']);
    const state = await p.state();
    expect(state.used).toBe(2);
    expect(state.queue).toEqual([]);
    expect(Object.fromEntries(state.leases)).toEqual({ c1: 'c', c3: 's', c4: 's' });
  });

  test('one batch applies its transitions in order: admissions queue as given, a release grants the head', async () => {
    const p = pool({ maxConcurrency: 1 });
    const replies = await p.batch(0, 'a', [
      ['a', 'c1'],
      ['a', 'c2'],
      ['a', 'c3'],
      ['r', 'c1'],
      ['a', 'c4'],
    ]);
    expect(replies).toEqual(['granted 0', 'queued 1', 'queued 2', 'c2', 'queued 2']);
    expect((await p.state()).queue).toEqual(['c3', 'c4']);
  });

  test('a call behind a queue waits although a slot is free, so no one jumps the line', async () => {
    const p = pool({ maxConcurrency: 1 });
    await p.admit(0, 'a', 'c1');
    await p.admit(0, 'a', 'c2'); // queued
    // The release grants c2 in the same script: the slot is never seen free by c3.
    expect(await p.release(1, 'c1')).toEqual(['c2']);
    expect((await p.admit(1, 'b', 'c3'))[0]).toBe('queued');
  });

  test('a full queue refuses with QueueFull, counting the calls waiting and running', async () => {
    const p = pool({ maxConcurrency: 1, maxQueued: 2 });
    await p.admit(0, 'a', 'c1');
    await p.admit(0, 'a', 'c2');
    await p.admit(0, 'a', 'c3');
    expect(await p.admit(0, 'b', 'c4')).toEqual(['QueueFull', 3, 0]);
    expect((await p.state()).leases.has('c4')).toBe(false);
  });

  test('with maxQueued 0 a call that finds no free slot is refused at once', async () => {
    const p = pool({ maxConcurrency: 1, maxQueued: 0 });
    await p.admit(0, 'a', 'c1');
    expect((await p.admit(0, 'a', 'c2'))[0]).toBe('QueueFull');
  });

  test('SCH-5 a cleaning call keeps its in-flight unit: slots free, yet InflightFull refuses', async () => {
    const p = pool({ maxConcurrency: 2, maxQueued: 4, maxInflight: 2 });
    await p.admit(0, 'a', 'c1');
    await p.admit(0, 'a', 'c2');
    await p.leave(1, 'c1');
    await p.leave(1, 'c2');
    expect((await p.state()).used).toBe(0);
    expect(await p.admit(2, 'b', 'c3')).toEqual(['InflightFull', 2, 0]);
    await p.release(3, 'c1');
    expect((await p.admit(4, 'b', 'c3'))[0]).toBe('granted');
  });

  test('SCH-15 a queued call that leaves gives back its place and keeps in-flight until released', async () => {
    const p = pool({ maxConcurrency: 1 });
    await p.admit(0, 'a', 'c1');
    await p.admit(0, 'a', 'c2');
    await p.admit(0, 'a', 'c3');
    expect(await p.leave(1, 'c2')).toEqual([]);
    expect(await p.release(2, 'c1')).toEqual(['c3']);
    expect(Object.fromEntries((await p.state()).leases)).toEqual({ c2: 'c', c3: 's' });
  });

  test('releasing a lease twice frees its slot once; a leave after the release changes nothing', async () => {
    const p = pool({ maxConcurrency: 1 });
    await p.admit(0, 'a', 'c1');
    await p.admit(0, 'a', 'c2');
    await p.admit(0, 'a', 'c3');
    expect(await p.release(1, 'c1')).toEqual(['c2']);
    expect(await p.release(1, 'c1')).toEqual([]);
    expect(await p.leave(1, 'c1')).toEqual([]);
    const state = await p.state();
    expect(state.used).toBe(1);
    expect(state.queue).toEqual(['c3']);
  });

  test('the same lease admitted twice answers its state and takes nothing more', async () => {
    const p = pool({ maxConcurrency: 1 });
    await p.admit(0, 'a', 'c1');
    expect((await p.admit(0, 'a', 'c1'))[0]).toBe('granted');
    expect((await p.state()).used).toBe(1);
  });

  test('a node that stops renewing loses its slots exactly one TTL after its last renewal', async () => {
    const p = pool({ maxConcurrency: 2 }, 3_000);
    await p.admit(0, 'dead', 'd1');
    await p.admit(0, 'dead', 'd2');
    await p.admit(10, 'live', 'l1'); // queued behind the dead node's slots
    await p.renew(1_000, 'dead');
    await p.renew(1_000, 'live', ['l1']);
    await p.renew(3_000, 'live', ['l1']);
    // 3,999 ms: the dead node's last renewal (1,000) is not yet a TTL old.
    expect((await p.renew(3_999, 'live', ['l1'])).states).toBe('q');
    // 4,000 ms: its leases go, and the queue's head gets a freed slot in the same script.
    expect((await p.renew(4_000, 'live', ['l1'])).states).toBe('s');
    const state = await p.state();
    expect(state.used).toBe(1);
    expect([...state.leases.keys()]).toEqual(['l1']);
  });

  test('a live node that renews keeps its slots for good', async () => {
    const p = pool({ maxConcurrency: 1 }, 3_000);
    await p.admit(0, 'a', 'c1');
    for (let t = 1_000; t <= 30_000; t += 1_000) await p.renew(t, 'a');
    expect((await p.admit(30_500, 'b', 'c2'))[0]).toBe('queued');
    expect((await p.state()).leases.get('c1')).toBe('s');
  });

  test("a dead node's queued callers leave the queue with it; the others keep their order", async () => {
    const p = pool({ maxConcurrency: 1 }, 1_000);
    await p.admit(0, 'live', 'l1');
    await p.admit(0, 'dead', 'd1');
    await p.admit(0, 'live', 'l2');
    await p.admit(0, 'dead', 'd2');
    await p.admit(0, 'live', 'l3');
    await p.renew(900, 'live', ['l2', 'l3']);
    expect((await p.renew(1_500, 'live', ['l2', 'l3'])).states).toBe('qq');
    expect((await p.state()).queue).toEqual(['l2', 'l3']);
    expect(await p.release(1_600, 'l1')).toEqual(['l2']);
  });

  test("a renewal tells a node its leases were reclaimed while it was away ('x')", async () => {
    const p = pool({ maxConcurrency: 1 }, 1_000);
    await p.admit(0, 'a', 'c1');
    await p.admit(0, 'slow', 's1');
    await p.renew(500, 'a');
    const late = await p.renew(1_200, 'slow', ['s1']);
    expect(late.known).toBe(false);
    expect(late.states).toBe('x');
  });

  test('grants are published on the owner node’s channel', async () => {
    const p = pool({ maxConcurrency: 1 });
    const subscriber = new Redis(REDIS_URL);
    const messages: string[] = [];
    subscriber.on('message', (channel: string, id: string) => messages.push(`${channel}=${id}`));
    await subscriber.subscribe(`${p.fleet}grants:b`);
    await p.admit(0, 'a', 'c1');
    await p.admit(0, 'b', 'c2');
    await p.release(1, 'c1');
    await p.redis.ping();
    await new Promise<void>((resolve) =>
      messages.length > 0 ? resolve() : subscriber.once('message', () => resolve()),
    );
    subscriber.disconnect();
    expect(messages).toEqual([`${p.fleet}grants:b=c2`]);
  });

  test('renewal counts the live nodes of the fleet and forgets those past their TTL', async () => {
    const p = pool({}, 1_000);
    expect((await p.renew(0, 'a')).nodes).toBe(1);
    expect((await p.renew(0, 'b')).nodes).toBe(2);
    expect((await p.renew(999, 'a')).nodes).toBe(2);
    expect((await p.renew(1_000, 'a')).nodes).toBe(1);
  });

  test('requests per minute: the window refuses, and says when its oldest second leaves', async () => {
    const p = pool({ maxConcurrency: 10, maxInflight: 20, rpm: 3 }, 600_000);
    await p.admit(1_000, 'a', 'c1');
    await p.admit(2_500, 'a', 'c2');
    await p.admit(3_000, 'a', 'c3');
    expect(await p.admit(30_000, 'a', 'c4')).toEqual(['RateLimited', 3, 31_000]);
    // At 61 s the admission of second 1 has left the window.
    expect((await p.admit(61_000, 'a', 'c4'))[0]).toBe('granted');
  });

  test('tokens per minute: tokens used by finished calls close the window until they age out', async () => {
    const p = pool({ maxConcurrency: 10, maxInflight: 20, tpm: 100 }, 600_000);
    await p.admit(0, 'a', 'c1');
    await p.release(5_000, 'c1', 120);
    expect(await p.admit(6_000, 'a', 'c2')).toEqual(['RateLimited', 100, 59_000]);
    expect((await p.admit(65_000, 'a', 'c2'))[0]).toBe('granted');
  });

  test('two fleets on one Redis never see each other’s leases', async () => {
    const one = pool({ maxConcurrency: 1 });
    const two = pool({ maxConcurrency: 1 });
    await one.admit(0, 'a', 'c1');
    expect((await two.admit(0, 'a', 'c1'))[0]).toBe('granted');
    expect((await two.admit(0, 'a', 'c2'))[0]).toBe('queued');
    expect((await one.state()).queue).toEqual([]);
  });
});
