import { isAbsolute, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '@sluice/runtime';
import type { Agent } from './agent.js';
import {
  DEFAULT_EVENT_MEMORY_BYTES,
  DEFAULT_EVENT_RING_BYTES,
  DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MAX_SESSIONS_PER_WORKSPACE,
  DEFAULT_RING_SIZE,
  MAX_RING_SIZE,
  MAX_TERMINAL_EVENT_DELAY_MS,
} from '../defaults.js';
import { integerInRange, positiveInteger, positiveIntegerOrInfinity } from '../validate.js';
import type { ClosedBusRetention } from './session-buses.js';
import type { SessionEventSink } from './session-events.js';
import type { SessionStore } from '@sluice/store';

export {
  DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MAX_SESSIONS_PER_WORKSPACE,
  MAX_TERMINAL_EVENT_DELAY_MS,
};
/** Default of `maxClientsPerSession`. */
export const DEFAULT_MAX_CLIENTS_PER_SESSION = 64;
/** Default of `maxConversationMessages`. */
export const DEFAULT_MAX_CONVERSATION_MESSAGES = 1_000;
/** Default of `maxConversationBytes` (4 MiB of UTF-8 message text). */
export const DEFAULT_MAX_CONVERSATION_BYTES = 4 * 1024 * 1024;

/** Configuration of a {@link SessionBridge}; every limit is validated at construction. */
export interface SessionBridgeOptions {
  /** Runs the turns. */
  agent: Agent;
  /**
   * Also told every session event, in order, after the session's own stream (which the bridge
   * keeps: see `SessionBridge.streams`); for observers such as tests and metrics.
   */
  events?: SessionEventSink;
  /** Events kept per session for `Last-Event-ID` replay; default 8000. */
  eventRingSize?: number;
  /** Bytes one session's replay window may hold (oldest events go first); default 16 MiB. */
  eventRingBytes?: number;
  /** Bytes every session's replay window may hold together; default 256 MiB. */
  eventMemoryBytes?: number;
  /** How long, and for how many sessions, a closed session's events stay replayable. */
  closedStreamRetention?: ClosedBusRetention;
  /** Source of monotonic time and of the deadline timers; defaults to the system clock. */
  clock?: Clock;
  /** Wall-clock epoch milliseconds for `createdAt`, `queuedAt`, …; defaults to `Date.now`. */
  wallClock?: () => number;
  /** Makes session, prompt and client ids; defaults to `randomUUID`. */
  newId?: () => string;
  /** Persists sessions; without one, sessions live only in memory and cannot be restored. */
  store?: SessionStore;
  /** Outstanding (queued + running) prompts per session; default 5, `0` or `Infinity` = unlimited. */
  maxPendingPromptsPerSession?: number;
  /** Deadline of every admitted prompt in ms from admission (`--prompt-deadline-ms`); default none. */
  promptDeadlineMs?: number;
  /** Sessions over all workspaces; default 128, `Infinity` = unlimited. */
  maxSessions?: number;
  /** Sessions per workspace; default 32, `Infinity` = unlimited. */
  maxSessionsPerWorkspace?: number;
  /** Clients attached to one session; default 64 (the least recently seen is evicted). */
  maxClientsPerSession?: number;
  /** Messages of history kept per session; default 1000 (oldest trimmed first). */
  maxConversationMessages?: number;
  /** UTF-8 bytes of history text kept per session; default 4 MiB (oldest trimmed first). */
  maxConversationBytes?: number;
  /**
   * A terminal event decided by the agent is published no sooner than this many ms after
   * admission (PROTOCOL §5: a known client race); default 0, at most 1000.
   */
  terminalEventDelayMs?: number;
  /** Absolute roots of the served workspaces; when given, a session's cwd must lie inside one. */
  workspaces?: readonly string[];
  /**
   * The model names a session may pick (`POST /session {"model"}`): `resolve` answers the
   * model's catalogue name for a name or alias (the default for `undefined`) or throws (`model_not_found`).
   * Absent: sessions name no model and a create naming one is refused.
   */
  models?: SessionModels;
  /**
   * A live session with no pending prompt, no event-stream subscriber and no client activity
   * (attach, prompt, heartbeat) for this long is closed (`session_closed {reason:'idle_timeout'}`);
   * it stays stored and can be loaded again. Default 0 = never.
   */
  sessionIdleTimeoutMs?: number;
  /** Told about failures that change nothing for clients: a throwing sink, a failing store. */
  onError?: (error: unknown, context: string) => void;
  /**
   * Told about every prompt that ended `turn_error` (a model or provider failure, a deadline,
   * a closed session), for the operator's log. Carries ids and codes only, never prompt text
   * nor the error's message, which may quote an upstream answer.
   */
  onTurnError?: (failure: TurnFailure) => void;
  /** Told every admission decision of `sendPrompt` / `trySendPrompt`, for metrics. */
  admissions?: AdmissionObserver;
}

/**
 * What {@link SessionBridgeOptions.admissions} is told: each prompt admitted (a retry answered
 * from its `Idempotency-Key` admits nothing and is not told), and each refusal with its error
 * (a `PromptQueueFullError`, or what admission threw). Called synchronously on the admission
 * path, so it must be cheap and must not throw.
 */
export interface AdmissionObserver {
  admitted(sessionId: string): void;
  refused(sessionId: string, error: unknown): void;
}

/** What {@link SessionBridgeOptions.onTurnError} is told. */
export interface TurnFailure {
  sessionId: string;
  promptId: string;
  code: string | undefined;
  errorKind: string | undefined;
  /**
   * The turn error's message: the agent's or the runtime's words (a provider failure's, with the
   * upstream's own message about the request), bounded; never the prompt's text.
   */
  message: string;
}

/** The models sessions pick from, by name (the daemon's catalogue). */
export interface SessionModels {
  /** The catalogue name of `name` (a name or alias; the default for `undefined`); throws when unknown. */
  resolve(name: string | undefined): string;
}

/** The validated configuration (unlimited values are `Infinity`). */
export interface ResolvedBridgeOptions {
  agent: Agent;
  events: SessionEventSink | undefined;
  eventRingSize: number;
  eventRingBytes: number;
  eventMemoryBytes: number;
  closedStreamRetention: ClosedBusRetention | undefined;
  clock: Clock;
  wallClock: () => number;
  newId: () => string;
  store: SessionStore | undefined;
  maxPendingPromptsPerSession: number;
  promptDeadlineMs: number | undefined;
  maxSessions: number;
  maxSessionsPerWorkspace: number;
  maxClientsPerSession: number;
  maxConversationMessages: number;
  maxConversationBytes: number;
  terminalEventDelayMs: number;
  workspaces: readonly string[] | undefined;
  models: SessionModels | undefined;
  sessionIdleTimeoutMs: number;
  onError: (error: unknown, context: string) => void;
  onTurnError: (failure: TurnFailure) => void;
  admissions: AdmissionObserver | undefined;
}

/** `0` and `Infinity` mean unlimited (returned as `Infinity`); else a non-negative integer (BP-2). */
export function pendingPromptLimit(value: number): number {
  if (value === 0 || value === Infinity) return Infinity;
  if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  throw new RangeError(
    `maxPendingPromptsPerSession must be a non-negative integer, 0 or Infinity (unlimited), got ${String(value)}`,
  );
}

/** Validates `options`, fills in the defaults and throws a `RangeError` naming any bad value. */
export function resolveBridgeOptions(options: SessionBridgeOptions): ResolvedBridgeOptions {
  const clock = options.clock ?? systemClock;
  let promptDeadlineMs: number | undefined;
  if (options.promptDeadlineMs !== undefined)
    promptDeadlineMs = integerInRange('promptDeadlineMs', options.promptDeadlineMs, 1, clock.maxTimerMs);
  let workspaces: string[] | undefined;
  if (options.workspaces !== undefined) {
    if (options.workspaces.length === 0)
      throw new RangeError('workspaces must list at least one absolute path, got []');
    workspaces = options.workspaces.map((root) => {
      if (typeof root !== 'string' || !isAbsolute(root))
        throw new RangeError(`workspaces must hold absolute paths, got ${JSON.stringify(root)}`);
      return resolve(root);
    });
  }
  return {
    agent: options.agent,
    events: options.events,
    eventRingSize: integerInRange(
      'eventRingSize',
      options.eventRingSize ?? DEFAULT_RING_SIZE,
      1,
      MAX_RING_SIZE,
    ),
    eventRingBytes: positiveIntegerOrInfinity(
      'eventRingBytes',
      options.eventRingBytes ?? DEFAULT_EVENT_RING_BYTES,
    ),
    eventMemoryBytes: positiveIntegerOrInfinity(
      'eventMemoryBytes',
      options.eventMemoryBytes ?? DEFAULT_EVENT_MEMORY_BYTES,
    ),
    models: options.models,
    closedStreamRetention: options.closedStreamRetention,
    clock,
    wallClock: options.wallClock ?? Date.now,
    newId: options.newId ?? randomUUID,
    store: options.store,
    maxPendingPromptsPerSession: pendingPromptLimit(
      options.maxPendingPromptsPerSession ?? DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION,
    ),
    promptDeadlineMs,
    maxSessions: positiveIntegerOrInfinity('maxSessions', options.maxSessions ?? DEFAULT_MAX_SESSIONS),
    maxSessionsPerWorkspace: positiveIntegerOrInfinity(
      'maxSessionsPerWorkspace',
      options.maxSessionsPerWorkspace ?? DEFAULT_MAX_SESSIONS_PER_WORKSPACE,
    ),
    maxClientsPerSession: positiveInteger(
      'maxClientsPerSession',
      options.maxClientsPerSession ?? DEFAULT_MAX_CLIENTS_PER_SESSION,
    ),
    maxConversationMessages: positiveInteger(
      'maxConversationMessages',
      options.maxConversationMessages ?? DEFAULT_MAX_CONVERSATION_MESSAGES,
    ),
    maxConversationBytes: positiveInteger(
      'maxConversationBytes',
      options.maxConversationBytes ?? DEFAULT_MAX_CONVERSATION_BYTES,
    ),
    terminalEventDelayMs: integerInRange(
      'terminalEventDelayMs',
      options.terminalEventDelayMs ?? 0,
      0,
      MAX_TERMINAL_EVENT_DELAY_MS,
    ),
    workspaces,
    sessionIdleTimeoutMs: integerInRange(
      'sessionIdleTimeoutMs',
      options.sessionIdleTimeoutMs ?? 0,
      0,
      clock.maxTimerMs,
    ),
    onError: options.onError ?? (() => {}),
    onTurnError: options.onTurnError ?? (() => {}),
    admissions: options.admissions,
  };
}
