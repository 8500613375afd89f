import { describe, expect, test } from 'vitest';
import { FrameBudget } from '../../web/frame-budget.js';

// The web page's frame budget (issue 31, long sessions): markdown rendering beyond a frame's
// share waits for the next frame, the newest waiting message first, and work larger than the
// budget still runs, alone in its frame. A test clock and a hand-driven "next frame".

/** A budget whose clock advances only when work says so, and whose frames start on `frame()`. */
function harness(budgetMs: number) {
  let now = 0;
  let pending: Array<() => void> = [];
  const budget = new FrameBudget(
    budgetMs,
    () => now,
    (callback) => pending.push(callback),
  );
  return {
    budget,
    /** Work that takes `ms` on the test clock and returns `value`. */
    work:
      <T>(ms: number, value: T) =>
      () => ((now += ms), value),
    /** Starts the next frame. */
    frame: () => {
      const callbacks = pending;
      pending = [];
      for (const callback of callbacks) callback();
    },
  };
}

describe('issue 31: the frame budget for markdown', () => {
  test('work past the frame’s budget waits for the next frame', () => {
    const { budget, work, frame } = harness(8);
    expect(budget.run(work(3, 'a'))).toBe('a');
    expect(budget.run(work(3, 'b'))).toBe('b');
    expect(budget.run(work(3, 'c'))).toBe('c'); // 6 ms used: still under 8
    expect(budget.run(work(3, 'd'))).toBeUndefined(); // 9 ms used: this frame is spent
    frame();
    expect(budget.run(work(3, 'd'))).toBe('d');
  });

  test('work larger than the budget runs when it is the first of its frame', () => {
    const { budget, work, frame } = harness(8);
    expect(budget.run(work(30, 'big'))).toBe('big');
    expect(budget.run(work(1, 'next'))).toBeUndefined();
    frame();
    expect(budget.run(work(1, 'next'))).toBe('next');
  });

  test('the waiting work is retried at the next frame, the newest first, and can be withdrawn', () => {
    const { budget, work, frame } = harness(8);
    budget.run(work(10, 'spent'));
    const retried: string[] = [];
    budget.later(() => retried.push('older'));
    const withdraw = budget.later(() => retried.push('withdrawn'));
    budget.later(() => retried.push('newest'));
    withdraw();
    expect(retried).toEqual([]);
    frame();
    expect(retried).toEqual(['newest', 'older']);
    frame();
    expect(retried).toEqual(['newest', 'older']);
  });

  test('a budget that is not a positive number of ms is refused, naming it', () => {
    const now = () => 0;
    const nextFrame = () => {};
    expect(() => new FrameBudget(0, now, nextFrame)).toThrow(/positive number of ms, not 0/);
    expect(() => new FrameBudget(Number.NaN, now, nextFrame)).toThrow(/not NaN/);
  });
});
