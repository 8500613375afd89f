/** One event the session layer publishes; the event bus stamps ids, `v` and `_meta`. */
export interface SessionEvent {
  type: string;
  data: Record<string, unknown>;
  /** Set on every event that belongs to one prompt. */
  promptId?: string;
  /** The client that sent the prompt (or made the request) the event belongs to. */
  originatorClientId?: string;
}

/**
 * Where the bridge publishes session events — the event bus, adapted. `publish` is called
 * synchronously in event order; a throwing sink is reported through `onError` and never
 * changes the bridge's state.
 */
export interface SessionEventSink {
  publish(sessionId: string, event: SessionEvent): void;
}

/** Wire names of the events the bridge publishes (PROTOCOL §5, §6). */
export const SESSION_EVENT = {
  sessionUpdate: 'session_update',
  turnComplete: 'turn_complete',
  turnError: 'turn_error',
  pendingPromptAdded: 'pending_prompt_added',
  pendingPromptStarted: 'pending_prompt_started',
  pendingPromptCompleted: 'pending_prompt_completed',
  promptCancelled: 'prompt_cancelled',
  sessionClosed: 'session_closed',
  sessionBranched: 'session_branched',
  sessionRecordingDegraded: 'session_recording_degraded',
} as const;

/** The two event types of which exactly one ends every admitted prompt. */
export const TERMINAL_EVENT_TYPES: ReadonlySet<string> = new Set([
  SESSION_EVENT.turnComplete,
  SESSION_EVENT.turnError,
]);
