import type {
  AcceptedPrompt,
  SessionListOptions,
  SessionListPage,
  SessionOwner,
  SessionRecord,
  SettledPrompt,
} from './session-record.js';

/**
 * Persistence of sessions, so a session can be loaded or resumed after a restart: the port the
 * daemon's sessions layer calls, implemented by its in-memory store, the SQLite store
 * (`daemon/src/persistence/`) and the fleet's PostgreSQL store. The bridge calls `save` after a
 * session opens, after each turn that changed the conversation, and for a branch; saves of one
 * session are issued one at a time and in order. A failed save is reported as a
 * `session_recording_degraded` event and never fails a prompt.
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
   * The admission ledger ({@link AdmissionLedgerStore}), optional: records accepted prompts and
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

/**
 * The durable side of admission (issue 19 item 8): which accepted prompts have not ended. A
 * store that keeps it lets a restarted daemon end each prompt a killed one accepted with
 * `turn_error {code:"daemon_restarted"}` instead of leaving it without a terminal event.
 */
export interface AdmissionLedgerStore {
  /** Records, in one transaction, prompts accepted and prompts ended since the last call. */
  recordAdmissions(accepted: readonly AcceptedPrompt[], settled: readonly SettledPrompt[]): Promise<void>;
  /** The session's accepted prompts that never ended, oldest first; forgets them. */
  takeUnsettled(sessionId: string): Promise<AcceptedPrompt[]>;
}
