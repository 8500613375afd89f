import type { ConversationMessage } from './agent.js';
import type { AcceptedPrompt, SettledPrompt } from './prompt-ledger.js';

/** `single` coalesces onto one default session per workspace; `thread` always creates. */
export type SessionScope = 'single' | 'thread';

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
  conversation: ConversationMessage[];
}

/**
 * Persistence of sessions, so a session can be loaded or resumed after a restart. The bridge
 * calls `save` after a session opens, after each turn that changed the conversation, and for
 * a branch; saves of one session are issued one at a time and in order. A failed save is
 * reported as a `session_recording_degraded` event and never fails a prompt.
 */
export interface SessionStore {
  save(record: SessionRecord): Promise<void>;
  /** The stored record, or `undefined` when the store has none for `sessionId`. */
  load(sessionId: string): Promise<SessionRecord | undefined>;
  /**
   * One page of the stored sessions of a workspace (its resolved root, as the bridge records
   * it), newest first by `createdAt` then `sessionId` (see `ListPosition`), with a cursor of
   * `encodeListCursor`. Optional: a store without it lists nothing after a restart.
   */
  list?(workspaceCwd: string, options?: SessionListOptions): Promise<SessionListPage>;
  /**
   * The admission ledger (`AdmissionLedgerStore`), optional: records accepted prompts and
   * ended ones in one transaction. A store with it lets a restarted daemon end what a killed
   * one accepted (`turn_error daemon_restarted`).
   */
  recordAdmissions?(accepted: readonly AcceptedPrompt[], settled: readonly SettledPrompt[]): Promise<void>;
  /** The session's accepted prompts that never ended, oldest first; forgets them. */
  takeUnsettled?(sessionId: string): Promise<AcceptedPrompt[]>;
  /**
   * Deletes the stored session, its history and its ledger entries (`DELETE /session/:id?purge=true`);
   * resolves `false` when none was stored. Optional: a store without it cannot purge.
   */
  delete?(sessionId: string): Promise<boolean>;
  /**
   * A store shared by several daemons (a fleet): takes the session for this daemon before it
   * opens the stored session, resolving `undefined`, or resolves the live daemon that has it open
   * instead. Optional: a store of one daemon has nothing to claim.
   */
  claim?(sessionId: string): Promise<SessionOwner | undefined>;
  /** Gives up this daemon's claim on a session it closed, so another daemon may open it. */
  release?(sessionId: string): Promise<void>;
}

/** The daemon of a fleet that has a session open: where a client finds it. */
export interface SessionOwner {
  /** The daemon's node id in the shared store. */
  nodeId: string;
  /** Its advertised URL (`--advertise-url`), when it gave one. */
  url?: string;
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
