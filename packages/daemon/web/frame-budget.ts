// A share of each animation frame for work the page may put off: past it, the rest of that work
// waits for the next frame. While a long session streams in, a burst of events can bring dozens
// of messages in one frame (the stream is read in whatever chunks arrived while the page was
// busy); rendering the markdown of all of them at once made frames of 100–200 ms. With a budget
// the frame stays short and the messages not rendered yet follow in the next frames.

/** Runs a callback when the next frame starts: `requestAnimationFrame` in the page. */
export type FrameScheduler = (callback: () => void) => void;

export class FrameBudget {
  private used = 0;
  private armed = false;
  private readonly waiting = new Set<() => void>();

  /**
   * `budgetMs` of work a frame; `now` is the clock (ms) and `nextFrame` runs a callback when the
   * next frame starts (both injected, so the budget is tested without a browser).
   */
  constructor(
    private readonly budgetMs: number,
    private readonly now: () => number,
    private readonly nextFrame: FrameScheduler,
  ) {
    if (!Number.isFinite(budgetMs) || budgetMs <= 0)
      throw new RangeError(`a frame budget must be a positive number of ms, not ${budgetMs}`);
  }

  /**
   * Runs `work` and returns its result when this frame still has time left, `undefined` (and
   * runs nothing) when it does not. A frame's first work always runs, however long it takes,
   * so work larger than the budget still gets done.
   */
  run<T>(work: () => T): T | undefined {
    if (this.used >= this.budgetMs) return undefined;
    this.arm();
    const start = this.now();
    try {
      return work();
    } finally {
      this.used += this.now() - start;
    }
  }

  /**
   * Calls `retry` when the next frame starts, the newest first (the newest message is the one
   * a person reads); the returned function withdraws it.
   */
  later(retry: () => void): () => void {
    this.waiting.add(retry);
    this.arm();
    return () => this.waiting.delete(retry);
  }

  private arm(): void {
    if (this.armed) return;
    this.armed = true;
    this.nextFrame(() => {
      this.armed = false;
      this.used = 0;
      const retries = [...this.waiting].reverse();
      this.waiting.clear();
      for (const retry of retries) retry();
    });
  }
}
