import type { Clock, TimerHandle } from '@sluice/runtime';

/** A process that dies sooner than this after its start is an early death. */
export const EARLY_DEATH_MS = 60_000;
/** The wait after a first early death; it doubles with each early death in a row. */
export const FIRST_RESTART_DELAY_MS = 1_000;
/** The longest wait between starts of an agent that keeps dying early. */
export const MAX_RESTART_DELAY_MS = 60_000;
/** Homes (agent and workspace) whose early deaths are remembered; beyond, the oldest is forgotten. */
export const MAX_HOMES = 1_024;

/**
 * When to start a process ahead again after one of the same agent and workspace died: at once
 * after one that lived {@link EARLY_DEATH_MS} or more; after an early death, 1 s, doubling with
 * each early death in a row up to a minute, so an agent that crashes after every start is not
 * restarted in a loop. Pending restarts end with {@link cancel}.
 */
export class RestartBackoff {
  private readonly earlyDeaths = new Map<string, number>();
  private readonly timers = new Set<TimerHandle>();

  constructor(private readonly clock: Clock) {}

  /** Calls `restart` once the death of `home`'s process, started at `startedAt`, has been waited out. */
  afterDeath(home: string, startedAt: number, restart: () => void): void {
    if (this.clock.now() - startedAt >= EARLY_DEATH_MS) {
      this.earlyDeaths.delete(home);
      restart();
      return;
    }
    const inARow = (this.earlyDeaths.get(home) ?? 0) + 1;
    this.earlyDeaths.delete(home);
    this.earlyDeaths.set(home, inARow);
    if (this.earlyDeaths.size > MAX_HOMES) this.earlyDeaths.delete(this.earlyDeaths.keys().next().value!);
    const delay = Math.min(MAX_RESTART_DELAY_MS, FIRST_RESTART_DELAY_MS * 2 ** (inARow - 1));
    const timer = this.clock.setTimer(() => {
      this.timers.delete(timer);
      restart();
    }, delay);
    this.timers.add(timer);
  }

  /** Drops every pending restart (the pool is shutting down). */
  cancel(): void {
    for (const timer of this.timers) this.clock.clearTimer(timer);
    this.timers.clear();
  }
}
