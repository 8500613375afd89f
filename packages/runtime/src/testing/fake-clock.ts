import { MAX_TIMER_MS, type Clock, type TimerHandle } from '../clock.js';

interface FakeTimer {
  id: number;
  at: number;
  callback: () => void;
}

/**
 * A deterministic clock for tests: time moves only through `advance`, which fires due timers
 * in deadline order (ties in creation order).
 */
export class FakeClock implements Clock {
  readonly maxTimerMs: number;
  private current: number;
  private nextId = 1;
  private readonly timers = new Map<number, FakeTimer>();

  constructor(start = 1_000, maxTimerMs = MAX_TIMER_MS) {
    this.current = start;
    this.maxTimerMs = maxTimerMs;
  }

  now(): number {
    return this.current;
  }

  setTimer(callback: () => void, delayMs: number): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, { id, at: this.current + Math.max(0, delayMs), callback });
    return id;
  }

  clearTimer(handle: TimerHandle): void {
    this.timers.delete(handle as number);
  }

  /** Number of timers set and not yet fired or cleared. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      let due: FakeTimer | undefined;
      for (const timer of this.timers.values()) {
        if (
          timer.at <= target &&
          (due === undefined || timer.at < due.at || (timer.at === due.at && timer.id < due.id))
        )
          due = timer;
      }
      if (due === undefined) break;
      this.timers.delete(due.id);
      this.current = Math.max(this.current, due.at);
      due.callback();
    }
    this.current = target;
  }
}
