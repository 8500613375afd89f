import { describe, expect, test } from 'vitest';
import type { ModelRuntimeError } from '../src/errors.js';
import {
  BudgetError,
  CancelledError,
  InvalidTimeoutError,
  ModelClosureFailure,
  OverloadedError,
  QueueTimeoutError,
  RecordingError,
  RequestTooLargeError,
  RuntimeStoppedError,
  TimeoutError,
} from '../src/errors.js';
import { countedOptions } from '../src/gateway/counted-options.js';
import { ModelRuntime } from '../src/gateway/model-runtime.js';
import { FaultInjectingJournal } from '../src/testing/fault-journal.js';
import { MemoryJournal } from '../src/journal/memory-journal.js';
import type { ModelRequestRecord, ModelResultRecord } from '../src/journal/records.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { FakeClock } from '../src/testing/index.js';
import { ask, runtimeFixture, track } from './helpers/runtime-fixture.js';
import { ScriptedProvider, settle } from './helpers/scripted-provider.js';

describe('SCH-1 one bounded scheduler for complete and streaming generation', () => {
  test('SCH-1 complete and stream calls share the same execution slots', async () => {
    const { runtime, provider } = runtimeFixture({ maxConcurrency: 1, maxQueued: 1 });
    const first = track(runtime.complete(ask()));
    const stream = runtime.stream(ask());
    expect(runtime.schedulerSnapshot()).toMatchObject({ inflight: 2, queued: 1 });
    expect(() => runtime.complete(ask())).toThrow(OverloadedError);
    await settle();
    provider.last().succeed('one');
    await settle();
    expect(first.status).toBe('resolved');
    const events = [];
    const iterator = stream[Symbol.asyncIterator]();
    const next = iterator.next();
    await settle();
    provider.last().delta('two');
    events.push((await next).value);
    const finished = iterator.next();
    await settle();
    provider.last().succeed();
    events.push((await finished).value);
    expect(events.map((e) => e?.type)).toEqual(['delta', 'finished']);
    expect(runtime.schedulerSnapshot().inflight).toBe(0);
  });
});

describe('SCH-2 task budget bounds cumulative usage', () => {
  test('SCH-2 an explicitly shared budget accumulates across calls and then refuses', async () => {
    const { runtime, provider } = runtimeFixture();
    const budget = runtime.createBudget('task-1', { maxOutputTokens: 3 });
    const first = runtime.complete(ask(), { budget });
    await settle();
    provider.last().succeed('one two');
    await first;
    const second = runtime.complete(ask(), { budget });
    await settle();
    provider.last().succeed('three');
    await second;
    expect(budget.usage()).toMatchObject({ calls: 2, outputTokens: 3, stoppedReason: 'output_tokens' });
    expect(() => runtime.complete(ask(), { budget })).toThrow(BudgetError);
  });

  test('SCH-2 a call without a budget runs in a bounded temporary scope', async () => {
    const { runtime, provider, memory } = runtimeFixture();
    const result = runtime.complete(ask());
    await settle();
    provider.last().succeed();
    await result;
    const [request] = memory.records() as ModelRequestRecord[];
    expect(request?.taskId).toMatch(/^tmp-/);
  });

  test('SCH-2 a stopped budget rejects new calls with its typed reason and nothing is accepted', () => {
    const { runtime, memory } = runtimeFixture();
    const budget = runtime.createBudget('task-2');
    budget.stop();
    const error = captureSync(() => runtime.complete(ask(), { budget }));
    expect(error).toBeInstanceOf(BudgetError);
    expect(error).toMatchObject({ code: 'budget_exhausted', reason: 'stopped', retryable: false });
    expect(memory.records()).toHaveLength(0);
  });
});

describe('SCH-3 / SCH-4 configuration', () => {
  test('SCH-3 defaults are 4 slots, 32 queued, 64 in flight, 8 MiB, 600 s', () => {
    expect(new Scheduler().limits).toEqual({
      maxConcurrency: 4,
      maxQueued: 32,
      maxInflight: 64,
      maxRequestBytes: 8 * 1024 * 1024,
      defaultTimeoutMs: 600_000,
    });
  });

  test.each([
    [{ maxConcurrency: 0 }, 'maxConcurrency must be a positive integer, got 0'],
    [{ maxConcurrency: 1.5 }, 'maxConcurrency must be a positive integer, got 1.5'],
    [{ maxQueued: -1 }, 'maxQueued must be a non-negative integer, got -1'],
    [{ maxInflight: 0 }, 'maxInflight must be a positive integer, got 0'],
    [{ maxInflight: 2, maxConcurrency: 4 }, 'maxInflight must be at least maxConcurrency (4), got 2'],
    [{ maxRequestBytes: 0 }, 'maxRequestBytes must be a positive integer, got 0'],
    [{ defaultTimeoutMs: Number.NaN }, 'defaultTimeoutMs must be a positive finite number, got NaN'],
  ])('SCH-4 invalid configuration %o fails construction naming the value', (config, message) => {
    expect(() => new Scheduler(config)).toThrow(message);
  });

  test('SCH-4 maxQueued 0 refuses a call that finds no free slot, without a waiter', () => {
    const { runtime } = runtimeFixture({ maxConcurrency: 1, maxQueued: 0 });
    void runtime.complete(ask());
    const error = captureSync(() => runtime.complete(ask()));
    expect(error).toMatchObject({ capacity: 'QueueFull', code: 'model_overloaded', retryable: true });
    expect(runtime.schedulerSnapshot()).toMatchObject({ inflight: 1, queued: 0 });
  });
});

describe('SCH-5 cleanup keeps in-flight capacity', () => {
  test('SCH-5 a blocked result record frees the slot but keeps the in-flight unit', async () => {
    const { runtime, provider, journal } = runtimeFixture({
      maxConcurrency: 1,
      maxInflight: 1,
      maxQueued: 4,
    });
    const call = track(runtime.complete(ask()));
    await settle();
    journal.stall();
    provider.last().succeed();
    await settle();
    const snapshot = runtime.schedulerSnapshot();
    expect(snapshot).toMatchObject({ inflight: 1, executing: 0, preparing: 0, cleaning: 1 });
    expect(captureSync(() => runtime.complete(ask()))).toMatchObject({ capacity: 'InflightFull' });
    expect(call.status).toBe('pending');
    journal.resume();
    await settle();
    expect(call.status).toBe('resolved');
    expect(runtime.schedulerSnapshot().inflight).toBe(0);
  });
});

describe('SCH-6 / SCH-7 effective timeout and the absolute deadline', () => {
  test('SCH-6 an absent timeout inherits the runtime default', async () => {
    const { runtime, provider } = runtimeFixture({ defaultTimeoutMs: 5_000 });
    void runtime.complete(ask());
    await settle();
    expect(provider.last().options.timeoutMs).toBe(5_000);
  });

  test('SCH-6 an explicit timeout can only tighten the default', async () => {
    const { runtime, provider } = runtimeFixture({ defaultTimeoutMs: 5_000 });
    void runtime.complete(ask(), { timeoutMs: 60_000 });
    await settle();
    expect(provider.last().options.timeoutMs).toBe(5_000);
    void runtime.complete(ask(), { timeoutMs: 2_000 });
    await settle();
    expect(provider.last().options.timeoutMs).toBe(2_000);
  });

  test('SCH-6 leaving the queue does not restart the clock', async () => {
    const { runtime, provider, clock } = runtimeFixture({ maxConcurrency: 1 });
    void runtime.complete(ask(), { timeoutMs: 10_000 }).catch(() => undefined);
    const second = track(runtime.complete(ask(), { timeoutMs: 10_000 }));
    await settle();
    clock.advance(6_000);
    provider.calls[0]?.succeed();
    await settle();
    expect(provider.calls).toHaveLength(2);
    clock.advance(4_000);
    await settle();
    expect(second.error).toBeInstanceOf(TimeoutError);
    expect(second.error).toMatchObject({ code: 'model_timeout', phase: 'executing' });
  });

  test('SCH-7 a zero timeout times out at once and never starts the provider', () => {
    const { runtime, provider, memory } = runtimeFixture();
    const error = captureSync(() => runtime.complete(ask(), { timeoutMs: 0 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(provider.calls).toHaveLength(0);
    expect(memory.records()).toHaveLength(0);
  });

  test.each([-1, Number.NaN, '10' as unknown as number])(
    'SCH-7 a call timeout of %s that cannot form a deadline is InvalidTimeout',
    (timeoutMs) => {
      const { runtime } = runtimeFixture();
      const error = captureSync(() => runtime.complete(ask(), { timeoutMs }));
      expect(error).toBeInstanceOf(InvalidTimeoutError);
      expect(error).toMatchObject({ code: 'invalid_timeout', retryable: false });
    },
  );

  test('SCH-7 a default timeout the clock cannot represent fails construction', () => {
    const clock = new FakeClock(0, 1_000);
    expect(() => new Scheduler({ clock, defaultTimeoutMs: 1_001 })).toThrow(
      'defaultTimeoutMs cannot be represented on the clock (at most 1000 ms), got 1001',
    );
    expect(() => new Scheduler({ defaultTimeoutMs: 2 ** 31 })).toThrow(/cannot be represented/);
  });
});

describe('SCH-8 the outer deadline is separate from the timeout handed to the provider', () => {
  test('SCH-8 effective 10 s, 7 s queued: the provider is aborted at the 10 s mark while the record says 10 s', async () => {
    const { runtime, provider, clock, memory } = runtimeFixture({ maxConcurrency: 1 });
    const blocker = track(runtime.complete(ask('first'), { timeoutMs: 60_000 }));
    const call = track(runtime.complete(ask('second'), { timeoutMs: 10_000 }));
    await settle();
    clock.advance(7_000);
    provider.calls[0]?.succeed();
    await settle();
    expect(blocker.status).toBe('resolved');
    const second = provider.calls[1];
    expect(second?.options.timeoutMs).toBe(10_000);
    clock.advance(2_999);
    await settle();
    expect(second?.options.signal.aborted).toBe(false);
    clock.advance(1);
    await settle();
    expect(second?.options.signal.aborted).toBe(true);
    expect(call.error).toBeInstanceOf(TimeoutError);
    const request = memory
      .records()
      .find((r): r is ModelRequestRecord => r.type === 'model_request' && r.callId !== firstCallId(memory));
    expect(request?.options.timeoutMs).toBe(10_000);
  });

  test('SCH-8 a provider that ignores its signal still loses its slot at the deadline', async () => {
    const { runtime, provider, clock } = runtimeFixture({ maxConcurrency: 1 });
    provider.ignoreAbort = true;
    const call = track(runtime.complete(ask(), { timeoutMs: 1_000 }));
    await settle();
    clock.advance(1_000);
    await settle();
    expect(call.error).toBeInstanceOf(TimeoutError);
    expect(runtime.schedulerSnapshot()).toMatchObject({ inflight: 0, executing: 0 });
  });
});

describe('SCH-9 request recording and the deadline', () => {
  test('SCH-9 the provider starts only after the request record is confirmed', async () => {
    const { runtime, provider, journal } = runtimeFixture();
    journal.stall();
    void runtime.complete(ask());
    await settle();
    expect(provider.calls).toHaveLength(0);
    expect(runtime.schedulerSnapshot().jobs[0]).toMatchObject({
      phase: 'Preparing',
      recording: true,
      requestRecorded: false,
    });
    journal.resume();
    await settle();
    expect(provider.calls).toHaveLength(1);
  });

  test('SCH-9 a broken injected wall clock neither stops a call from being recorded nor strands it', async () => {
    for (const [reading, at] of [
      [Number.NaN, '1970-01-01T00:00:00.000Z'],
      [-5, '1970-01-01T00:00:00.000Z'],
      [1e20, '+275760-09-13T00:00:00.000Z'],
    ] as const) {
      const { runtime, provider, memory } = runtimeFixture({}, { wallClockMs: () => reading });
      const answer = runtime.complete(ask());
      await settle();
      provider.calls[0]!.succeed();
      await expect(answer).resolves.toMatchObject({ text: 'ok' });
      expect(memory.records().map((record) => record.at)).toEqual([at, at]);
      expect(memory.records()[0]!.callId).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      expect(runtime.schedulerSnapshot().inflight).toBe(0);
    }
  });

  test('SCH-9 a request record outliving the deadline is awaited and the provider never starts', async () => {
    const { runtime, provider, journal, clock, memory } = runtimeFixture();
    journal.stall();
    const call = track(runtime.complete(ask(), { timeoutMs: 1_000 }));
    clock.advance(1_000);
    await settle();
    expect(call.status).toBe('pending');
    expect(runtime.schedulerSnapshot().inflight).toBe(1);
    journal.resume();
    await settle();
    expect(provider.calls).toHaveLength(0);
    expect(call.error).toMatchObject({ code: 'model_timeout', phase: 'preparing' });
    expect(memory.records().map((r) => r.type)).toEqual(['model_request', 'model_result']);
  });
});

describe('SCH-10 / SCH-11 / SCH-13 observation', () => {
  test('SCH-10 the snapshot shows each phase: Queued, Preparing, Executing, Cleaning', async () => {
    const { runtime, provider, journal } = runtimeFixture({ maxConcurrency: 3 });
    void runtime.complete(ask(), { sessionId: 'E' });
    void runtime.complete(ask(), { sessionId: 'A' });
    await settle();
    journal.stall();
    void runtime.complete(ask(), { sessionId: 'B' });
    provider.calls[1]?.succeed();
    await settle();
    void runtime.complete(ask(), { sessionId: 'C' });
    void runtime.complete(ask(), { sessionId: 'D' });
    const s = runtime.schedulerSnapshot();
    expect(s.jobs.map((j) => `${j.sessionId}:${j.phase}`)).toEqual([
      'E:Executing',
      'A:Cleaning',
      'B:Preparing',
      'C:Preparing',
      'D:Queued',
    ]);
    expect([s.queued, s.preparing, s.executing, s.cleaning, s.inflight]).toEqual([1, 2, 1, 1, 5]);
    journal.resume();
    await settle();
    expect(runtime.schedulerSnapshot().jobs.map((j) => j.phase)).toEqual([
      'Executing',
      'Executing',
      'Executing',
      'Queued',
    ]);
  });

  test('SCH-11 a job report has timing and recording flags and never the prompt', async () => {
    const { runtime, clock } = runtimeFixture({ maxConcurrency: 1 });
    void runtime.complete(ask('top secret prompt'), { timeoutMs: 10_000, sessionId: 's1' });
    void runtime.complete(ask('another secret'), { timeoutMs: 10_000 });
    await settle();
    clock.advance(2_500);
    const s = runtime.schedulerSnapshot();
    expect(s.accepting).toBe(true);
    expect(s.jobs[0]).toMatchObject({
      phase: 'Executing',
      sessionId: 's1',
      timeoutMs: 10_000,
      remainingMs: 7_500,
      requestRecorded: true,
      resultRecorded: false,
      recording: false,
    });
    expect(s.jobs[1]).toMatchObject({ phase: 'Queued', requestRecorded: true });
    expect(s.jobs[1]?.phaseDurationsMs.Queued).toBe(2_500);
    expect(JSON.stringify(s)).not.toMatch(/secret/);
  });

  test('SCH-10 phase durations: each phase lasts until the next begins, skipped phases count zero', async () => {
    const { runtime, clock, journal, provider } = runtimeFixture({ maxConcurrency: 1 });
    const durations = (index: number) => runtime.schedulerSnapshot().jobs[index]?.phaseDurationsMs;
    journal.stall();
    void runtime.complete(ask()); // holds the slot, Preparing until its request record is confirmed
    void runtime.complete(ask());
    clock.advance(1_000);
    expect(durations(0)).toEqual({ Queued: 0, Preparing: 1_000, Executing: 0, Cleaning: 0 });
    journal.resume();
    await settle();
    clock.advance(2_000);
    expect(durations(0)).toEqual({ Queued: 0, Preparing: 1_000, Executing: 2_000, Cleaning: 0 });
    journal.stall();
    provider.last().succeed();
    await settle();
    clock.advance(3_000); // the result record is stalled: Cleaning
    expect(durations(0)).toEqual({ Queued: 0, Preparing: 1_000, Executing: 2_000, Cleaning: 3_000 });
    // The second job's request record was confirmed while it waited: it ran as soon as the slot came.
    expect(runtime.schedulerSnapshot().jobs[1]).toMatchObject({ phase: 'Executing' });
    expect(durations(1)).toEqual({ Queued: 3_000, Preparing: 0, Executing: 3_000, Cleaning: 0 });
    journal.resume();
    await settle();

    journal.stall();
    const ac = new AbortController();
    void runtime.complete(ask(), { signal: ac.signal }).catch(() => undefined);
    clock.advance(500);
    ac.abort(); // Queued → Cleaning directly; its result waits for the stalled request record
    clock.advance(250);
    expect(runtime.schedulerSnapshot().jobs[1]).toMatchObject({ phase: 'Cleaning' });
    expect(durations(1)).toEqual({ Queued: 500, Preparing: 0, Executing: 0, Cleaning: 250 });
    journal.resume();
    await settle();
  });

  test('SCH-5 an observer hook that throws stops nothing: calls settle, slots and in-flight units come back', async () => {
    const reported: unknown[] = [];
    const broken = (hook: string) => () => {
      throw new Error(`${hook} hook is broken`);
    };
    const { runtime, provider } = runtimeFixture(
      { maxConcurrency: 1, maxQueued: 1 },
      {
        observer: {
          admitted: broken('admitted'),
          rejected: broken('rejected'),
          slotGranted: broken('slotGranted'),
          slotReleased: broken('slotReleased'),
          finished: broken('finished'),
        },
        reportError: (error) => reported.push(error),
      },
    );
    const first = track(runtime.complete(ask()));
    const second = track(runtime.complete(ask()));
    // The admission error reaches the caller, not the hook's.
    expect(() => runtime.complete(ask())).toThrow(OverloadedError);
    await settle();
    provider.last().succeed('one');
    await settle();
    provider.last().succeed('two');
    await settle();
    expect([first.status, second.status]).toEqual(['resolved', 'resolved']);
    expect(runtime.schedulerSnapshot()).toMatchObject({ inflight: 0, queued: 0, executing: 0, cleaning: 0 });
    const hooks = reported.map((error) => (error as Error).message.split(' ')[0]);
    expect(hooks.sort()).toEqual([
      'admitted',
      'admitted',
      'finished',
      'finished',
      'rejected',
      'slotGranted',
      'slotGranted',
      'slotReleased',
      'slotReleased',
    ]);
  });

  test('SCH-11 a queued job may already be recording: phase is not durability', async () => {
    const { runtime, journal } = runtimeFixture({ maxConcurrency: 1 });
    void runtime.complete(ask());
    journal.stall();
    void runtime.complete(ask());
    const queued = runtime.schedulerSnapshot().jobs[1];
    expect(queued).toMatchObject({ phase: 'Queued', recording: true, requestRecorded: false });
    journal.resume();
    await settle();
    expect(runtime.schedulerSnapshot().jobs[1]).toMatchObject({
      phase: 'Queued',
      recording: false,
      requestRecorded: true,
    });
  });

  test('SCH-13 a finished job leaves the snapshot; no history is kept', async () => {
    const { runtime, provider } = runtimeFixture();
    for (let i = 0; i < 50; i++) {
      const call = runtime.complete(ask());
      await settle();
      provider.last().succeed();
      await call;
    }
    expect(runtime.schedulerSnapshot()).toMatchObject({ inflight: 0, jobs: [] });
  });
});

describe('SCH-12 FIFO slot allocation', () => {
  test('SCH-12 slots are allocated in admission order', async () => {
    const granted: string[] = [];
    const clock = new FakeClock();
    const provider = new ScriptedProvider();
    const runtime = new ModelRuntime({
      provider,
      journal: new MemoryJournal(),
      clock,
      scheduler: { maxConcurrency: 1 },
      observer: { slotGranted: (job) => granted.push(job.sessionId ?? '') },
    });
    for (const id of ['a', 'b', 'c', 'd']) void runtime.complete(ask(), { sessionId: id });
    for (let i = 0; i < 4; i++) {
      await settle();
      provider.last().succeed();
    }
    await settle();
    expect(granted).toEqual(['a', 'b', 'c', 'd']);
  });

  test('SCH-12 a cancelled waiter leaves the middle of the queue and order holds', async () => {
    const granted: string[] = [];
    const provider = new ScriptedProvider();
    const runtime = new ModelRuntime({
      provider,
      journal: new MemoryJournal(),
      clock: new FakeClock(),
      scheduler: { maxConcurrency: 1 },
      observer: { slotGranted: (job) => granted.push(job.sessionId ?? '') },
    });
    const controllers = ['a', 'b', 'c'].map((id) => {
      const controller = new AbortController();
      runtime.complete(ask(), { sessionId: id, signal: controller.signal }).catch(() => undefined);
      return controller;
    });
    controllers[1]?.abort();
    await settle();
    provider.last().succeed();
    await settle();
    provider.last().succeed();
    await settle();
    expect(granted).toEqual(['a', 'c']);
  });

  test('SCH-12/15 waiters that left while their cleanup is held are passed over, in the middle and at the front', async () => {
    const granted: string[] = [];
    const provider = new ScriptedProvider();
    const memory = new MemoryJournal();
    const journal = new FaultInjectingJournal(memory);
    const runtime = new ModelRuntime({
      provider,
      journal,
      clock: new FakeClock(),
      scheduler: { maxConcurrency: 1 },
      observer: { slotGranted: (job) => granted.push(job.sessionId ?? '') },
    });
    const controllers = new Map<string, AbortController>();
    const outcomes = new Map<string, ReturnType<typeof track>>();
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) {
      const controller = new AbortController();
      controllers.set(id, controller);
      outcomes.set(id, track(runtime.complete(ask(), { sessionId: id, signal: controller.signal })));
    }
    await settle();
    // Every request is recorded; now the journal holds each cancelled waiter's result record, so
    // those waiters stay in flight (Cleaning) while the queue moves past them.
    journal.stall();
    controllers.get('c')?.abort(); // the middle
    controllers.get('b')?.abort(); // the front
    controllers.get('e')?.abort(); // the middle again
    await settle();
    expect(runtime.schedulerSnapshot()).toMatchObject({ inflight: 6, queued: 2, cleaning: 3 });
    provider.last().succeed(); // a ends: d, not a cancelled waiter, gets the slot
    await settle();
    expect(granted).toEqual(['a', 'd']);
    // The held cleanups finish while d runs: e, next after d, leaves the in-flight list.
    journal.resume();
    await settle();
    expect(runtime.schedulerSnapshot()).toMatchObject({ inflight: 2, queued: 1, cleaning: 0 });
    provider.last().succeed(); // d ends: f
    await settle();
    expect(granted).toEqual(['a', 'd', 'f']);
    provider.last().succeed();
    await settle();
    expect(['a', 'b', 'c', 'd', 'e', 'f'].map((id) => outcomes.get(id)?.status)).toEqual([
      'resolved',
      'rejected',
      'rejected',
      'resolved',
      'rejected',
      'resolved',
    ]);
    expect(runtime.schedulerSnapshot()).toMatchObject({ inflight: 0, queued: 0 });
  });

  test('SCH-12 shutdown stops every waiter, whatever left before it, and only waiters', async () => {
    const provider = new ScriptedProvider();
    const journal = new FaultInjectingJournal(new MemoryJournal());
    const runtime = new ModelRuntime({
      provider,
      journal,
      clock: new FakeClock(),
      scheduler: { maxConcurrency: 1 },
    });
    const controller = new AbortController();
    const running = track(runtime.complete(ask()));
    const left = track(runtime.complete(ask(), { signal: controller.signal }));
    const waiting = [track(runtime.complete(ask())), track(runtime.complete(ask()))];
    await settle();
    journal.stall();
    controller.abort();
    await settle();
    const stopped = runtime.shutdown();
    await settle();
    expect(waiting.map((w) => (w.error as Error | undefined)?.constructor)).toEqual([undefined, undefined]);
    expect(runtime.schedulerSnapshot()).toMatchObject({ queued: 0, executing: 1, cleaning: 3 });
    journal.resume();
    provider.last().succeed();
    await stopped;
    expect(running.status).toBe('resolved');
    expect(left.error).toBeInstanceOf(CancelledError);
    for (const w of waiting) expect(w.error).toBeInstanceOf(RuntimeStoppedError);
  });
});

describe('SCH-14 typed errors', () => {
  test('SCH-14 every error has a stable code and a retryable flag', () => {
    const errors: ModelRuntimeError[] = [
      new OverloadedError('QueueFull', 32),
      new OverloadedError('InflightFull', 64),
      new RequestTooLargeError(10),
      new QueueTimeoutError(10),
      new InvalidTimeoutError(-1),
      new BudgetError('cost', 't'),
      new TimeoutError(10, 'executing'),
      new CancelledError(),
      new RuntimeStoppedError(),
    ];
    expect(errors.map((e) => [e.code, e.retryable])).toEqual([
      ['model_overloaded', true],
      ['model_overloaded', true],
      ['request_too_large', false],
      ['model_queue_timeout', true],
      ['invalid_timeout', false],
      ['budget_exhausted', false],
      ['model_timeout', true],
      ['model_cancelled', false],
      ['runtime_stopped', false],
    ]);
  });

  test('SCH-14 a deadline spent in the queue is QueueTimeout, of the Timeout class', async () => {
    const { runtime, clock, provider } = runtimeFixture({ maxConcurrency: 1 });
    void runtime.complete(ask(), { timeoutMs: 60_000 });
    const queued = track(runtime.complete(ask(), { timeoutMs: 1_000 }));
    clock.advance(1_000);
    await settle();
    expect(queued.error).toBeInstanceOf(QueueTimeoutError);
    expect(queued.error).toBeInstanceOf(TimeoutError);
    expect(queued.error).toMatchObject({ code: 'model_queue_timeout' });
    expect(provider.calls).toHaveLength(1);
  });

  test('SCH-14 host cancellation is reported as Cancelled, not as a timeout', async () => {
    const { runtime } = runtimeFixture();
    const controller = new AbortController();
    const call = track(runtime.complete(ask(), { signal: controller.signal }));
    await settle();
    controller.abort();
    await settle();
    expect(call.error).toBeInstanceOf(CancelledError);
    expect(captureSync(() => runtime.complete(ask(), { signal: controller.signal }))).toBeInstanceOf(
      CancelledError,
    );
  });

  test('SCH-14 runtime stop cancels queued work with RuntimeStopped and refuses new calls', async () => {
    const { runtime, provider } = runtimeFixture({ maxConcurrency: 1 });
    const running = track(runtime.complete(ask()));
    const queued = track(runtime.complete(ask()));
    const done = track(runtime.shutdown());
    await settle();
    expect(queued.error).toBeInstanceOf(RuntimeStoppedError);
    expect(captureSync(() => runtime.complete(ask()))).toBeInstanceOf(RuntimeStoppedError);
    expect(runtime.schedulerSnapshot().accepting).toBe(false);
    expect(done.status).toBe('pending');
    provider.last().succeed();
    await settle();
    expect(running.status).toBe('resolved');
    expect(done.status).toBe('resolved');
  });
});

describe('SCH-15 a departed queued job still owns its request record', () => {
  test('SCH-15 a queued timeout records the failure only after the request record is confirmed', async () => {
    const { runtime, clock, journal, memory } = runtimeFixture({ maxConcurrency: 1 });
    void runtime.complete(ask(), { timeoutMs: 60_000 });
    await settle();
    journal.stall();
    const queued = track(runtime.complete(ask(), { timeoutMs: 1_000 }));
    clock.advance(1_000);
    await settle();
    expect(runtime.schedulerSnapshot()).toMatchObject({ inflight: 2, queued: 0, cleaning: 1 });
    expect(queued.status).toBe('pending');
    journal.resume();
    await settle();
    expect(queued.error).toBeInstanceOf(QueueTimeoutError);
    const types = memory.records().map((r) => r.type);
    expect(types).toEqual(['model_request', 'model_request', 'model_result']);
    const result = memory.records()[2] as ModelResultRecord;
    expect(result).toMatchObject({ outcome: 'error', error: { code: 'model_queue_timeout' } });
  });

  test('SCH-15 a failed request record yields a Recording error with evidence and no provider call', async () => {
    const { runtime, journal, provider, memory } = runtimeFixture();
    journal.failNext(1, 'disk full');
    const call = track(runtime.complete(ask()));
    await settle();
    expect(provider.calls).toHaveLength(0);
    expect(call.error).toBeInstanceOf(RecordingError);
    expect((call.error as RecordingError).evidence).toMatchObject({
      record: 'model_request',
      journal: 'memory',
      error: 'disk full',
    });
    expect(memory.records()).toHaveLength(0);
    expect(runtime.schedulerSnapshot().inflight).toBe(0);
  });

  test('SCH-15 a queued job whose request record fails leaves the queue at once', async () => {
    const { runtime, journal } = runtimeFixture({ maxConcurrency: 1 });
    void runtime.complete(ask());
    journal.failNext(1, 'io error');
    const queued = track(runtime.complete(ask()));
    await settle();
    expect(queued.error).toBeInstanceOf(RecordingError);
    expect(runtime.schedulerSnapshot()).toMatchObject({ inflight: 1, queued: 0 });
  });
});

describe('SCH-16 success only after the result record', () => {
  test('SCH-16 a complete response is delivered only after its result record is confirmed', async () => {
    const { runtime, provider, journal } = runtimeFixture();
    const call = track(runtime.complete(ask()));
    await settle();
    journal.stall();
    provider.last().succeed('answer');
    await settle();
    expect(call.status).toBe('pending');
    expect(runtime.schedulerSnapshot().jobs[0]).toMatchObject({
      phase: 'Cleaning',
      recording: true,
      resultRecorded: false,
    });
    journal.resume();
    await settle();
    expect(call.value).toMatchObject({ text: 'answer', stopReason: 'end_turn' });
  });

  test('SCH-16 the stream Finished event waits for the result record; deltas do not', async () => {
    const { runtime, provider, journal } = runtimeFixture();
    const iterator = runtime.stream(ask())[Symbol.asyncIterator]();
    const first = iterator.next();
    await settle();
    provider.last().delta('hi');
    expect((await first).value).toEqual({ type: 'delta', text: 'hi' });
    journal.stall();
    const finished = track(iterator.next());
    await settle();
    provider.last().succeed();
    await settle();
    expect(finished.status).toBe('pending');
    journal.resume();
    await settle();
    expect(finished.value).toMatchObject({ value: { type: 'finished', stopReason: 'end_turn' } });
    expect(await iterator.next()).toMatchObject({ done: true });
  });

  test('SCH-16 a failed result record is ModelClosureFailure, not masked by a timeout', async () => {
    const { runtime, provider, journal, clock } = runtimeFixture();
    const call = track(runtime.complete(ask(), { timeoutMs: 1_000 }));
    await settle();
    journal.stall();
    provider.last().succeed();
    await settle();
    clock.advance(5_000);
    journal.failHeld('disk gone');
    await settle();
    expect(call.error).toBeInstanceOf(ModelClosureFailure);
    expect(call.error).toMatchObject({
      code: 'model_closure_failure',
      outcome: 'success',
      evidence: { record: 'model_result', error: 'disk gone' },
    });
  });

  test('SCH-16 shutdown drains accepted work including recording', async () => {
    const { runtime, provider, journal } = runtimeFixture();
    const call = track(runtime.complete(ask()));
    await settle();
    journal.stall();
    provider.last().succeed();
    const done = track(runtime.shutdown());
    await settle();
    expect(done.status).toBe('pending');
    journal.resume();
    await settle();
    expect(call.status).toBe('resolved');
    expect(done.status).toBe('resolved');
  });
});

describe('SCH-17 request size', () => {
  test('SCH-17 a request over maxRequestBytes is refused and nothing is accepted', () => {
    const { runtime, memory } = runtimeFixture({ maxRequestBytes: 1_000 });
    const error = captureSync(() => runtime.complete(ask('x'.repeat(1_000))));
    expect(error).toBeInstanceOf(RequestTooLargeError);
    expect(error).toMatchObject({ limitBytes: 1_000, code: 'request_too_large' });
    expect(memory.records()).toHaveLength(0);
    expect(runtime.schedulerSnapshot().inflight).toBe(0);
  });

  test('SCH-17 the effective options count toward the limit too', () => {
    const { runtime } = runtimeFixture({ maxRequestBytes: 400 });
    const request = ask('y'.repeat(60));
    expect(() => runtime.complete(request, { sessionId: 's' })).not.toThrow();
    expect(() => runtime.complete(request, { sessionId: 's'.repeat(200) })).toThrow(RequestTooLargeError);
  });

  test.each([
    { name: 'a temporary task', options: {} },
    {
      name: 'a shared budget, session, turn and model',
      options: { task: 'tâsk "7"', sessionId: 's-1', turnId: 't\n2', model: 'm€' },
    },
  ])(
    'SCH-17 the limit is exact: request plus effective options, as JSON.stringify counts them ($name)',
    ({ options }) => {
      const request = ask('ünïcode "quoted" \u{1F600}');
      const { task, ...call } = options as {
        task?: string;
        sessionId?: string;
        turnId?: string;
        model?: string;
      };
      const exact =
        Buffer.byteLength(JSON.stringify(request)) +
        Buffer.byteLength(
          JSON.stringify(
            countedOptions(
              600_000,
              'scripted',
              call.model ?? 'scripted-1',
              'complete',
              task ?? `tmp-${'0'.repeat(36)}`, // a temporary task is named after its 36-character call id
              call.sessionId,
              call.turnId,
            ),
          ),
        );
      for (const [limit, fits] of [
        [exact, true],
        [exact - 1, false],
      ] as const) {
        const { runtime } = runtimeFixture({ maxRequestBytes: limit });
        const budget = task === undefined ? undefined : runtime.createBudget(task);
        const admit = () => void runtime.complete(request, { ...call, budget }).catch(() => undefined);
        if (fits) expect(admit).not.toThrow();
        else expect(admit).toThrow(RequestTooLargeError);
      }
    },
  );
});

describe('SCH-18 counts are bounded', () => {
  test('SCH-18 admission never exceeds maxInflight however many callers try', () => {
    const { runtime } = runtimeFixture({ maxConcurrency: 2, maxQueued: 1_000, maxInflight: 10 });
    let accepted = 0;
    let refused = 0;
    for (let i = 0; i < 100; i++) {
      try {
        void runtime.complete(ask()).catch(() => undefined);
        accepted++;
      } catch (error) {
        expect(error).toMatchObject({ capacity: 'InflightFull' });
        refused++;
      }
    }
    expect([accepted, refused]).toEqual([10, 90]);
    expect(runtime.schedulerSnapshot().jobs).toHaveLength(10);
  });
});

describe('SCH-19 activity time and settlement', () => {
  test('SCH-19 remaining activity time tightens the deadline and exhausting it refuses calls', async () => {
    const { runtime, provider, clock } = runtimeFixture();
    const budget = runtime.createBudget('task', { maxActivityMs: 3_000 });
    const first = runtime.complete(ask(), { budget });
    await settle();
    clock.advance(2_000);
    provider.last().succeed();
    await first;
    void runtime.complete(ask(), { budget, timeoutMs: 10_000 }).catch(() => undefined);
    await settle();
    expect(provider.last().options.timeoutMs).toBe(1_000);
    clock.advance(1_000);
    await settle();
    expect(captureSync(() => runtime.complete(ask(), { budget }))).toMatchObject({ reason: 'activity_time' });
  });

  test('SCH-19 after a budget stops, accepted calls still record and settle', async () => {
    const { runtime, provider, memory } = runtimeFixture();
    const budget = runtime.createBudget('task');
    const call = runtime.complete(ask(), { budget });
    await settle();
    budget.stop();
    provider.last().succeed('done');
    await expect(call).resolves.toMatchObject({ text: 'done' });
    expect(memory.records().map((r) => r.type)).toEqual(['model_request', 'model_result']);
    expect(budget.usage()).toMatchObject({ calls: 1, stoppedReason: 'stopped' });
  });
});

function captureSync(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a synchronous throw');
}

function firstCallId(memory: MemoryJournal): string | undefined {
  return memory.records()[0]?.callId;
}

describe('journal records', () => {
  test('SCH-9/16 records list absent members as undefined, which their JSON leaves out, and carry the ones given', async () => {
    const { runtime, provider, memory } = runtimeFixture();
    const plain = runtime.complete(ask());
    await settle();
    provider.last().succeed('one');
    await plain;
    const correlated = runtime.complete(ask(), { sessionId: 's-1', turnId: 't-1' });
    await settle();
    provider.last().succeed('two');
    await correlated;
    const [request, result, correlatedRequest, correlatedResult] = memory
      .records()
      .map((r) => JSON.parse(JSON.stringify(r)));
    expect(Object.keys(request)).not.toContain('sessionId');
    expect(Object.keys(request)).not.toContain('turnId');
    expect(Object.keys(result)).not.toContain('error');
    expect(Object.keys(result)).not.toContain('costMinor');
    expect(correlatedRequest).toMatchObject({ type: 'model_request', sessionId: 's-1', turnId: 't-1' });
    expect(correlatedResult).toMatchObject({
      type: 'model_result',
      sessionId: 's-1',
      text: 'two',
      outcome: 'success',
    });
  });
});

describe('SCH-12 the wait queue', () => {
  test('SCH-12 aborting a job the scheduler never admitted changes nothing', async () => {
    const { Job } = await import('../src/scheduler/job.js');
    const scheduler = new Scheduler({ maxConcurrency: 1, maxQueued: 2 });
    const running = new Job('a', 't', undefined, 'complete', ask());
    const waiting = new Job('b', 't', undefined, 'complete', ask());
    scheduler.admit(running);
    scheduler.admit(waiting);
    scheduler.abort(new Job('x', 't', undefined, 'complete', ask()), new CancelledError());
    expect(scheduler.snapshot()).toMatchObject({ inflight: 2, queued: 1, preparing: 1 });
    scheduler.releaseSlot(running);
    expect(waiting.phase).toBe('Preparing');
  });
});
