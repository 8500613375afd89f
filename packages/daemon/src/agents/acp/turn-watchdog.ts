import type { Clock, TimerHandle } from '@sluice/runtime';

/**
 * The idle bound of one running turn: fires `onIdle` once the turn has gone `idleMs` with
 * neither agent output ({@link touch}) nor a model call of its session (`busy()` true when the
 * bound is reached re-arms it). Paused while the turn waits on a person (a permission question
 * has its own bound). `idleMs` 0 never fires.
 */
export class TurnWatchdog {
  private timer: TimerHandle | undefined;
  private paused = 0;
  private stopped = false;
  /** The bound was reached. */
  fired = false;

  constructor(
    private readonly clock: Clock,
    private readonly idleMs: number,
    private readonly busy: () => boolean,
    private readonly onIdle: () => void,
  ) {
    this.arm();
  }

  /** The agent said something: the bound starts again. */
  touch(): void {
    if (this.paused === 0) this.arm();
  }

  /** Waits on someone else until the returned function is called. */
  pause(): () => void {
    this.paused++;
    this.disarm();
    let resumed = false;
    return () => {
      if (resumed) return;
      resumed = true;
      this.paused--;
      this.touch();
    };
  }

  /** The turn ended. */
  stop(): void {
    this.stopped = true;
    this.disarm();
  }

  private arm(): void {
    this.disarm();
    if (this.stopped || this.fired || this.idleMs === 0) return;
    this.timer = this.clock.setTimer(() => {
      this.timer = undefined;
      if (this.busy()) return this.arm();
      this.fired = true;
      this.onIdle();
    }, this.idleMs);
  }

  private disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
  }
}
