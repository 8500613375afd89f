/** Outstanding prompts a session admits when nothing is configured (SPEC BP-1); daemon and SDK share it. */
export const DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION = 5;

/** Interval of the daemon's SSE heartbeat comment (PROTOCOL §6); clients time out idle streams by it. */
export const SSE_HEARTBEAT_MS = 15_000;

/** The longest delay a timer can wait (2^31−1 ms): every deadline and timeout is bounded by it. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
