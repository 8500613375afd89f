import { EVENT_TYPES } from '@sluice/protocol';
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

/** Wire names of the events the bridge publishes (PROTOCOL §5, §6): the protocol's one list. */
export const SESSION_EVENT = EVENT_TYPES;

/** The two event types of which exactly one ends every admitted prompt. */
export const TERMINAL_EVENT_TYPES: ReadonlySet<string> = new Set([
  SESSION_EVENT.turnComplete,
  SESSION_EVENT.turnError,
]);
