import type { Clock, TimerHandle } from '@sluice/runtime';

/** What the sweep needs to know of a live session. */
export interface IdleCandidate {
  readonly sessionId: string;
  readonly state: string;
  /** When a client last attached, prompted or sent a heartbeat (monotonic ms). */
  lastActiveAt: number;
  readonly runner: { readonly pendingPromptCount: number };
}

/** Options of {@link IdleSessions}. */
export interface IdleSessionsOptions {
  /** A session nobody uses is closed after this long (ms, > 0). */
  timeoutMs: number;
  clock: Clock;
  /** The live sessions, closing ones included. */
  sessions: () => Iterable<IdleCandidate>;
  /** Event-stream subscribers (SSE, ACP) the session has now. */
  subscribers: (sessionId: string) => number;
  /** Closes a session that has been idle for `timeoutMs`. */
  close: (sessionId: string) => void;
}

/** The sweep runs this often relative to the timeout: a session closes within 1.25 × the timeout. */
const SWEEPS_PER_TIMEOUT = 4;
const MIN_SWEEP_MS = 10;
const MAX_SWEEP_MS = 60_000;

/**
 * Closes live sessions nobody uses (`--session-idle-timeout-ms`): no pending prompt, no event
 * stream subscriber, and no client that attached, prompted or sent a heartbeat for `timeoutMs`.
 * A sweep every quarter of the timeout (at most a minute) looks at each session: O(sessions),
 * bounded by `maxSessions`. A busy session counts as active at every sweep, so its countdown
 * starts when its last prompt ends or its last subscriber leaves. The sweep's timer is unref'd.
 */
export class IdleSessions {
  private readonly sweepMs: number;
  private timer: TimerHandle | undefined;
  private stopped = false;

  /** The sweep of a timeout, or `undefined` when the timeout is 0 (off, the default). */
  static start(timeoutMs: number, options: Omit<IdleSessionsOptions, 'timeoutMs'>): IdleSessions | undefined {
    return timeoutMs === 0 ? undefined : new IdleSessions({ ...options, timeoutMs });
  }

  constructor(private readonly options: IdleSessionsOptions) {
    const { timeoutMs } = options;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > options.clock.maxTimerMs)
      throw new RangeError(
        `sessionIdleTimeoutMs must be an integer in [1, ${options.clock.maxTimerMs}], got ${String(timeoutMs)}`,
      );
    this.sweepMs = Math.min(MAX_SWEEP_MS, Math.max(MIN_SWEEP_MS, Math.ceil(timeoutMs / SWEEPS_PER_TIMEOUT)));
    this.arm();
  }

  /** Looks at every session now: marks busy ones active, closes those idle for the timeout. */
  sweep(): void {
    const now = this.options.clock.now();
    const idle: string[] = [];
    for (const session of this.options.sessions()) {
      if (session.state !== 'open') continue;
      if (session.runner.pendingPromptCount > 0 || this.options.subscribers(session.sessionId) > 0)
        session.lastActiveAt = now;
      else if (now - session.lastActiveAt >= this.options.timeoutMs) idle.push(session.sessionId);
    }
    // Closed after the walk: closing changes the collection walked.
    for (const sessionId of idle) this.options.close(sessionId);
  }

  /** Stops sweeping (the daemon shuts down). */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.options.clock.clearTimer(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    if (this.stopped) return;
    this.timer = this.options.clock.setTimer(() => {
      this.timer = undefined;
      try {
        this.sweep();
      } finally {
        this.arm();
      }
    }, this.sweepMs);
    (this.timer as { unref?: () => void } | undefined)?.unref?.();
  }
}
