// The daemon's session-store port (packages/daemon/src/sessions/session-store.ts and
// prompt-ledger.ts), spelled out here structurally: the fleet may not import the daemon, and
// the CLI hands a PostgresSessionStore to the daemon where TypeScript checks that it fits.

/** One message of a session's history. */
export interface ConversationMessage {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  name?: string;
  toolCallId?: string;
}

/** What a store keeps of one session. */
export interface SessionRecord {
  sessionId: string;
  workspaceCwd: string;
  cwd: string;
  scope: 'single' | 'thread';
  /** Wall-clock epoch milliseconds. */
  createdAt: number;
  updatedAt: number;
  displayName?: string;
  forkedFrom?: { sessionId: string };
  conversation: ConversationMessage[];
}

/** A stored session without its conversation. */
export interface StoredSessionSummary extends Omit<SessionRecord, 'conversation'> {
  messageCount: number;
}

/** Options of a listing page. */
export interface SessionListOptions {
  size?: number;
  cursor?: string;
}

/** One page of a listing; `nextCursor` is absent on the last page. */
export interface SessionListPage {
  sessions: StoredSessionSummary[];
  nextCursor?: string;
}

/** A prompt the daemon accepted (answered `202`) and has not yet ended. */
export interface AcceptedPrompt {
  readonly sessionId: string;
  readonly promptId: string;
  readonly acceptedAt: number;
}

/** A prompt that ended. */
export interface SettledPrompt {
  readonly sessionId: string;
  readonly promptId: string;
}

/** The live node that has a session open: where a client finds it. */
export interface SessionOwner {
  nodeId: string;
  /** The owner's `--advertise-url`, when it gave one. */
  url?: string;
}
