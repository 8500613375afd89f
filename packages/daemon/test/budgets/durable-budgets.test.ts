import { describe, expect, test } from 'vitest';
import { EchoProvider, MemoryJournal, ModelRuntime, type JournalRecord } from '@sluice/runtime';
import { FakeClock } from '@sluice/runtime/testing';
import { DaemonConfigError, resolveDaemonConfig } from '../../src/config.js';
import {
  BudgetLimitReachedError,
  BudgetNotFoundError,
  DurableBudgets,
  MemoryBudgetStore,
} from '../../src/budgets/index.js';

// Issue 21: the durable budgets' registry — recovery from the journal, and its bounds.

function setup(options: { maxBudgets?: number; maxLiveBudgets?: number } = {}) {
  const clock = new FakeClock();
  const journal = new MemoryJournal();
  // The echo model answers at once unless told to wait, on the fake clock.
  const provider = new EchoProvider({ clock });
  const runtime = new ModelRuntime({ provider, journal, clock, wallClockMs: () => 1e12 + clock.now() });
  const store = new MemoryBudgetStore();
  const reads: string[] = [];
  const counted = {
    name: journal.name,
    write: journal.write.bind(journal),
    append: journal.append.bind(journal),
    close: journal.close.bind(journal),
    recordsForTask: (taskId: string): JournalRecord[] => {
      reads.push(taskId);
      return journal.recordsForTask(taskId);
    },
  };
  const budgets = new DurableBudgets({ runtime, journal: counted, store, ...options });
  return { clock, journal, runtime, store, budgets, reads };
}

const ask = { messages: [{ role: 'user' as const, content: 'one two three' }] };

describe('a durable budget recovers its spend from the journal', () => {
  test('a second registry on the same journal and store reads the spend the first one counted', async () => {
    const first = setup();
    await first.budgets.create({ budgetId: 'b1', limits: { maxCalls: 5 } });
    const budget = await first.budgets.open('b1');
    await first.runtime.complete(ask, { budget });
    await first.runtime.complete(ask, { budget });
    const second = new DurableBudgets({ runtime: first.runtime, journal: first.journal, store: first.store });
    expect((await second.state('b1')).spent).toEqual((await first.budgets.state('b1')).spent);
    expect((await second.state('b1')).spent).toMatchObject({ calls: 2, inputTokens: 6, outputTokens: 8 });
  });

  test('concurrent first uses share one recovery, so nothing is read or counted twice', async () => {
    const { budgets, store } = setup();
    await budgets.create({ budgetId: 'b2', limits: {} });
    const reads: string[] = [];
    const journal = new MemoryJournal();
    const fresh = new DurableBudgets({
      runtime: setup().runtime,
      journal: Object.assign(journal, {
        recordsForTask: (taskId: string) => (reads.push(taskId), [] as JournalRecord[]),
      }),
      store,
    });
    const [a, b] = await Promise.all([fresh.open('b2'), fresh.open('b2')]);
    expect(a).toBe(b);
    expect(reads).toEqual(['b2']);
  });

  test('an unknown id is BudgetNotFoundError', async () => {
    await expect(setup().budgets.open('nope')).rejects.toBeInstanceOf(BudgetNotFoundError);
  });
});

describe('durable budgets are bounded', () => {
  test('creating past maxBudgets is refused with budget_limit_reached', async () => {
    const { budgets } = setup({ maxBudgets: 2 });
    await budgets.create({ budgetId: 'x1', limits: {} });
    await budgets.create({ budgetId: 'x2', limits: {} });
    await expect(budgets.create({ budgetId: 'x3', limits: {} })).rejects.toBeInstanceOf(
      BudgetLimitReachedError,
    );
  });

  test('past maxLiveBudgets the least recently used idle budget is dropped, and reopens with its spend', async () => {
    const { budgets, runtime, reads } = setup({ maxLiveBudgets: 2 });
    for (const id of ['l1', 'l2', 'l3']) await budgets.create({ budgetId: id, limits: {} });
    expect(budgets.liveCount).toBe(2);
    expect(budgets.isOpen('l1')).toBe(false);
    await runtime.complete(ask, { budget: await budgets.open('l1') });
    expect(budgets.liveCount).toBe(2);
    await budgets.open('l2');
    await budgets.open('l3'); // drops l1
    reads.length = 0;
    expect((await budgets.state('l1')).spent.calls).toBe(1);
    expect(reads).toEqual(['l1']);
  });

  test('a budget with a call in flight is never dropped', async () => {
    const clock = new FakeClock();
    const provider = new EchoProvider({ clock, latencyMs: 1_000 });
    const runtime = new ModelRuntime({ provider, journal: new MemoryJournal(), clock });
    const { journal, store } = setup();
    const budgets = new DurableBudgets({ runtime, journal, store, maxLiveBudgets: 1 });
    await budgets.create({ budgetId: 'busy', limits: {} });
    const call = runtime.complete(ask, { budget: await budgets.open('busy') });
    await budgets.create({ budgetId: 'next', limits: {} });
    expect(budgets.isOpen('busy')).toBe(true);
    expect(budgets.liveCount).toBe(2);
    clock.advance(1_000);
    await call;
  });

  test('limits of the registry are validated, naming the value', () => {
    expect(() => setup({ maxLiveBudgets: 0 })).toThrow('maxLiveBudgets must be a positive integer, got 0');
  });

  test('a maxBudgets setting below 1 fails at start-up naming it; the default is 10 000', () => {
    expect(() => resolveDaemonConfig({ maxBudgets: 0 })).toThrow(DaemonConfigError);
    expect(() => resolveDaemonConfig({ maxBudgets: 0 })).toThrow(/maxBudgets/);
    expect(resolveDaemonConfig({}).maxBudgets).toBe(10_000);
  });
});
