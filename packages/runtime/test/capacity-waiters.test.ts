import { describe, expect, test } from 'vitest';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { ask, runtimeFixture, track } from './helpers/runtime-fixture.js';
import { settle } from './helpers/scripted-provider.js';

// Issue 26 item 7 (docs/decisions/029): a call for an accepted prompt (`waitForCapacity`) that
// finds the scheduler full waits in the runtime, in arrival order, instead of a refusal.

describe('calls that wait for capacity', () => {
  test('a waiting call records nothing until room frees, then runs at once with its wait counted as queued', async () => {
    const { clock, provider, memory, runtime } = runtimeFixture({ maxConcurrency: 1, maxQueued: 0 });
    const first = track(runtime.complete(ask('first')));
    await settle();
    const waiter = track(runtime.complete(ask('second'), { waitForCapacity: true }));
    await settle();
    expect(runtime.schedulerSnapshot()).toMatchObject({ waiting: 1, maxWaiting: 256, inflight: 1 });
    expect(memory.records()).toHaveLength(1); // only the first call's request
    clock.advance(700);
    provider.last().succeed('one');
    await settle();
    // The slot went to the waiter when it was released: no timer, no retry.
    expect(first.status).toBe('resolved');
    expect(provider.calls).toHaveLength(2);
    expect(runtime.schedulerSnapshot()).toMatchObject({ waiting: 0, executing: 1 });
    provider.last().succeed('two');
    await settle();
    expect(waiter.status).toBe('resolved');
    const result = memory
      .records()
      .find((r) => r.type === 'model_result' && r.callId !== memory.records()[0]!.callId);
    expect(result).toMatchObject({ phases: { queuedMs: 700 } });
  });

  test('SCH-14: an outside call is still refused at once while calls wait', () => {
    const { runtime } = runtimeFixture({ maxConcurrency: 1, maxQueued: 0 });
    void runtime.complete(ask());
    void runtime.complete(ask(), { waitForCapacity: true });
    expect(() => runtime.complete(ask())).toThrow(expect.objectContaining({ code: 'model_overloaded' }));
  });

  test('the waiters are bounded: past maxWaiting a waiting call is refused as any other', () => {
    const { runtime } = runtimeFixture({ maxConcurrency: 1, maxQueued: 0, maxWaiting: 1 });
    void runtime.complete(ask());
    void runtime.complete(ask(), { waitForCapacity: true });
    expect(() => runtime.complete(ask(), { waitForCapacity: true })).toThrow(
      expect.objectContaining({ code: 'model_overloaded', capacity: 'QueueFull' }),
    );
    expect(runtime.schedulerSnapshot().waiting).toBe(1);
  });

  test('SCH-6: a waiter keeps the deadline of its arrival and leaves at it, with nothing recorded', async () => {
    const { clock, memory, runtime } = runtimeFixture({ maxConcurrency: 1, maxQueued: 0 });
    void runtime.complete(ask()).catch(() => undefined);
    const waiter = track(runtime.complete(ask(), { waitForCapacity: true, timeoutMs: 2_000 }));
    clock.advance(1_999);
    await settle();
    expect(waiter.status).toBe('pending');
    clock.advance(1);
    await settle();
    expect(waiter.error).toMatchObject({ code: 'model_queue_timeout' });
    expect(memory.records()).toHaveLength(1);
    expect(runtime.schedulerSnapshot().waiting).toBe(0);
  });

  test('a cancelled waiter leaves at once; the one behind it moves up; a stream waits too', async () => {
    const { provider, runtime } = runtimeFixture({ maxConcurrency: 1, maxQueued: 0 });
    void runtime.complete(ask('running'));
    await settle();
    const host = new AbortController();
    const cancelled = track(
      runtime.complete(ask('cancelled'), { waitForCapacity: true, signal: host.signal }),
    );
    const stream = runtime.stream(ask('streamed'), { waitForCapacity: true });
    host.abort();
    await settle();
    expect(cancelled.error).toMatchObject({ code: 'model_cancelled' });
    expect(runtime.schedulerSnapshot().waiting).toBe(1);
    provider.last().succeed();
    await settle();
    expect(provider.last().request).toEqual(ask('streamed'));
    provider.last().succeed();
    const events = [];
    for await (const event of stream) events.push(event.type);
    expect(events).toEqual(['finished']);
  });

  test('shutdown turns waiters away with runtime_stopped', async () => {
    const { provider, runtime } = runtimeFixture({ maxConcurrency: 1, maxQueued: 0 });
    void runtime.complete(ask());
    await settle();
    const waiter = track(runtime.complete(ask(), { waitForCapacity: true }));
    const down = runtime.shutdown();
    await settle();
    expect(waiter.error).toMatchObject({ code: 'runtime_stopped' });
    provider.last().succeed();
    await down;
  });

  test('maxWaiting must be a non-negative integer, named in the error', () => {
    expect(() => new Scheduler({ maxWaiting: -1 })).toThrow(
      'maxWaiting must be a non-negative integer, got -1',
    );
  });
});
