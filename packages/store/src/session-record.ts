/** `single` coalesces onto one default session per workspace; `thread` always creates. */
export type SessionScope = 'single' | 'thread';

/** One message of a session's history, as the agent reads it and every store keeps it. */
export interface ConversationMessage {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  name?: string;
  toolCallId?: string;
}

/** What a store keeps of one session: its metadata and its (bounded) conversation. */
export interface SessionRecord {
  sessionId: string;
  workspaceCwd: string;
  cwd: string;
  scope: SessionScope;
  /** Wall-clock epoch milliseconds. */
  createdAt: number;
  /** Wall-clock epoch milliseconds of the last change. */
  updatedAt: number;
  displayName?: string;
  forkedFrom?: { sessionId: string };
  /** The catalogue model the session's agent calls (issue 29 item 4); absent: the default. */
  model?: string;
  conversation: ConversationMessage[];
}

/** A stored session without its conversation, as a store's `list` returns it. */
export interface StoredSessionSummary extends Omit<SessionRecord, 'conversation'> {
  /** Messages of stored history. */
  messageCount: number;
}

/** Options of a listing page. */
export interface SessionListOptions {
  /** Sessions per page, 1 to 1000; default 20. */
  size?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
}

/** One page of a store's listing; `nextCursor` is absent on the last page. */
export interface SessionListPage {
  sessions: StoredSessionSummary[];
  nextCursor?: string;
}

/** The daemon of a fleet that has a session open: where a client finds it. */
export interface SessionOwner {
  /** The daemon's node id in the shared store. */
  nodeId: string;
  /** Its advertised URL (`--advertise-url`), when it gave one. */
  url?: string;
}

/** A prompt the daemon accepted (answered `202`) and has not yet ended. */
export interface AcceptedPrompt {
  readonly sessionId: string;
  readonly promptId: string;
  /** Wall-clock epoch milliseconds of admission. */
  readonly acceptedAt: number;
}

/** A prompt that ended: its acceptance no longer needs to be remembered. */
export interface SettledPrompt {
  readonly sessionId: string;
  readonly promptId: string;
}
