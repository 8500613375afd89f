import { DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION } from '@sluice/protocol';

/**
 * The daemon's defaults and bounds, each defined once. The folders that use them re-export
 * them; the CLI's help and the config's rules read them here, so that `--help` loads none of
 * those folders (docs/decisions/009).
 */

/** Where the journal and the sessions live (`--data-dir`). */
export const DEFAULT_DATA_DIR = '.sluice';
/** The echo model answers at once (`--echo-delay-ms`). */
export const DEFAULT_ECHO_DELAY_MS = 0;
/** How long SIGTERM waits for pending prompts before cancelling them (`--drain-timeout-ms`). */
export const DEFAULT_DRAIN_TIMEOUT_MS = 10_000;

/**
 * A request's headers and body must arrive within this (`--request-timeout-ms`): a client that
 * sends headers and part of a body cannot hold a connection open for ever (issue 19 item 4).
 * Responses, SSE streams included, are not bounded by it.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Open connections the server accepts at once (`--max-connections`); beyond it new ones are closed. */
export const DEFAULT_MAX_CONNECTIONS = 4096;

/**
 * `--rate-limit`'s requests per client and window, by tier (docs/decisions/035): a web chat with
 * a few people behind one address — a prompt every 10 s each at their busiest, a change or two
 * around each prompt, a page polling every 2 s — stays under them; a runaway script does not.
 */
export const DEFAULT_RATE_LIMIT_PROMPT = 30;
export const DEFAULT_RATE_LIMIT_MUTATION = 60;
export const DEFAULT_RATE_LIMIT_READ = 300;
/** `--rate-limit-window-ms`: the limits count per minute. */
export const DEFAULT_RATE_LIMIT_WINDOW_MS = 60_000;
/** Clients whose rate-limit windows one daemon keeps per tier; the least recent is forgotten past it. */
export const DEFAULT_RATE_LIMIT_CLIENTS = 10_000;

/** Events kept for `Last-Event-ID` replay per session (PROTOCOL §6). */
export const DEFAULT_RING_SIZE = 8000;
/** Bytes one session's replay window may hold (`--event-ring-bytes`; issue 19 item 3). */
export const DEFAULT_EVENT_RING_BYTES = 16 * 1024 * 1024;
/** Bytes every replay window may hold together (`--event-memory-bytes`). */
export const DEFAULT_EVENT_MEMORY_BYTES = 256 * 1024 * 1024;
/**
 * Bytes of conversation history the built-in chat agent sends with each turn, newest first
 * (`--context-max-bytes`): about a 128k-token context window, so a turn's cost stops growing
 * with the session's age (issue 19 soak).
 */
export const DEFAULT_CONTEXT_MAX_BYTES = 512 * 1024;
/** Upper bound of `ringSize`, so that a typo cannot reserve unbounded memory per session. */
export const MAX_RING_SIZE = 1_000_000;

/** Default of `responseTimeoutMs`: five minutes, the reference daemon's original default. */
export const DEFAULT_PERMISSION_RESPONSE_TIMEOUT_MS = 300_000;

/** Default of `maxPendingPromptsPerSession` (SPEC BP-1), shared with the SDK. */
export { DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION };
/** Default of `maxSessionsPerWorkspace`, advertised under `/capabilities` → `limits`. */
export const DEFAULT_MAX_SESSIONS_PER_WORKSPACE = 32;
/** Default of `maxSessions`, the cap over all workspaces. */
export const DEFAULT_MAX_SESSIONS = 128;

/** The daemon holds a terminal event this long after admission (PROTOCOL §5, a known client race). */
export const DEFAULT_TERMINAL_EVENT_DELAY_MS = 10;
/** Upper bound of `terminalEventDelayMs`. */
export const MAX_TERMINAL_EVENT_DELAY_MS = 1_000;

/** A live session nobody uses is closed after this long (`--session-idle-timeout-ms`); 0 = never. */
export const DEFAULT_SESSION_IDLE_TIMEOUT_MS = 0;
/** Model calls are kept in the journal this many days (`--journal-retention-days`); 0 = for ever. */
export const DEFAULT_JOURNAL_RETENTION_DAYS = 0;
/** The longest `--journal-retention-days`: a hundred years. */
export const MAX_JOURNAL_RETENTION_DAYS = 36_500;

/** Sessions one external agent process hosts (`--agent-sessions-per-process`); docs/decisions/030. */
export const DEFAULT_AGENT_SESSIONS_PER_PROCESS = 32;
/** Ready agent sessions each shared agent process keeps for creates (`--agent-spare-sessions`); docs/decisions/030. */
export const DEFAULT_AGENT_SPARE_SESSIONS = 4;
/** External agent processes at once (`--agent-max-processes`): a safety net, memory is the bound. */
export const DEFAULT_AGENT_MAX_PROCESSES = 64;
/** An agent process without a running turn is retired after this long (`--agent-idle-timeout-ms`). */
export const DEFAULT_AGENT_IDLE_TIMEOUT_MS = 300_000;
/** An agent process that leaves a liveness probe unanswered this long is killed (`--agent-liveness-timeout-ms`). */
export const DEFAULT_AGENT_LIVENESS_TIMEOUT_MS = 30_000;
/** After `session/cancel`, how long an agent may take to answer the prompt before it is killed. */
export const DEFAULT_AGENT_CANCEL_GRACE_MS = 10_000;

// Agent start and turn bounds (issue 27 item 8; docs/decisions/031-agent-process-hardening.md).
/** Bound of an agent's `initialize`, `session/new` and `session/load` (`--agent-start-timeout-ms`), as the reference. */
export const DEFAULT_AGENT_START_TIMEOUT_MS = 10_000;
/**
 * A turn with neither agent output nor a model call this long ends `agent_unresponsive`
 * (`--agent-turn-idle-timeout-ms`); 0 = never. Above qwen's longest shell-tool timeout (10 min).
 */
export const DEFAULT_AGENT_TURN_IDLE_TIMEOUT_MS = 900_000;

/** How long a daemon's lease in a shared store (`--store`) lasts unrenewed, in ms. */
export const DEFAULT_STORE_LEASE_MS = 15_000;
/** Durable task budgets a daemon stores at most (`--max-budgets`, issue 21); more are refused. */
export const DEFAULT_MAX_BUDGETS = 10_000;

/** pino's levels by name: what `--log-level` and `SLUICE_LOG_LEVEL` take. */
export const LOG_LEVELS: Readonly<Record<string, number>> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Infinity,
};

/** The names of {@link LOG_LEVELS}. */
export const LOG_LEVEL_NAMES: readonly string[] = Object.keys(LOG_LEVELS);

/** The values of `--log-format`: `auto` is `text` on a terminal, `json` elsewhere (docs/decisions/041). */
export const LOG_FORMATS = ['auto', 'json', 'text'] as const;
