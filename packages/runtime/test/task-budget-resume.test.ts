import { describe, expect, test } from 'vitest';
import { ModelRuntime } from '../src/gateway/model-runtime.js';
import type { ModelResultRecord } from '../src/journal/records.js';
import { ask, runtimeFixture } from './helpers/runtime-fixture.js';
import { settle } from './helpers/scripted-provider.js';

// Issue 21: result records carry the call's phase times, and a budget resumed from the journal
// starts where the task's budget stood.

const WALL_START = Date.parse('2030-01-01T00:00:00.000Z');

describe('SCH-19 a result record carries the time its call spent in each phase', () => {
  test('a call that waited for the only slot records its queued and executing time', async () => {
    const { clock, provider, memory, runtime } = runtimeFixture({ maxConcurrency: 1 });
    const first = runtime.complete(ask('one'));
    const second = runtime.complete(ask('two'));
    await settle();
    clock.advance(100);
    provider.calls[0]!.succeed();
    await first;
    await settle();
    clock.advance(40);
    provider.calls[1]!.succeed();
    await second;
    const results = memory.records().filter((r): r is ModelResultRecord => r.type === 'model_result');
    expect(results.map((r) => r.phases)).toEqual([
      { queuedMs: 0, preparingMs: 0, executingMs: 100 },
      { queuedMs: 100, preparingMs: 0, executingMs: 40 },
    ]);
  });
});

describe('SCH-2 a budget resumed from the journal starts where the task stood', () => {
  test('calls, tokens and activity time equal what the first runtime counted', async () => {
    const fixture = runtimeFixture({ maxConcurrency: 4 });
    const { clock, provider, memory } = fixture;
    const runtime = new ModelRuntime({
      provider,
      journal: memory,
      clock,
      wallClockMs: () => WALL_START + clock.now(),
    });
    const budget = runtime.createBudget('task-1', { maxCalls: 10 });
    const a = runtime.complete(ask('alpha'), { budget });
    clock.advance(30);
    const b = runtime.complete(ask('beta gamma'), { budget });
    await settle();
    clock.advance(50);
    provider.calls[0]!.succeed('one two');
    await a;
    clock.advance(70);
    provider.calls[1]!.succeed('three');
    await b;
    clock.advance(1_000); // idle: not activity
    const c = runtime.complete(ask('delta'), { budget });
    await settle();
    clock.advance(25);
    provider.calls[2]!.succeed();
    await c;

    const restarted = new ModelRuntime({ provider, journal: memory, clock });
    const resumed = restarted.resumeBudget('task-1', { maxCalls: 10 }, memory.recordsForTask('task-1'));
    expect(resumed.usage()).toEqual(budget.usage());
    expect(resumed.usage()).toMatchObject({ calls: 3, activityMs: 175 });
  });
});
