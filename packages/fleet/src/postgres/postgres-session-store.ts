import { boundedStart, ConversationCache, conversationOverlap } from '@sluice/runtime';
import type { Sql, TransactionSql } from 'postgres';
import { PostgresAdmissionLedger } from './admission-ledger.js';
import { SessionOwnedByOtherNodeError, StoreClosedError, type StoreLeaseLostError } from './errors.js';
import { listSessions } from './session-listing.js';
import type { SessionOwnership } from './session-ownership.js';
import {
  SESSION_COLUMNS,
  checkRecord,
  copyMessage,
  fromMessageRow,
  toMetadata,
  type MessageRow,
  type SessionRow,
} from './session-rows.js';
import type {
  AcceptedPrompt,
  ConversationMessage,
  SessionListOptions,
  SessionListPage,
  SessionOwner,
  SessionRecord,
  SettledPrompt,
} from './session-types.js';

/** What a {@link PostgresSessionStore} is made of; the bounds are validated by `openPostgresFleet`. */
export interface PostgresSessionStoreParts {
  sql: Sql;
  store: string;
  ownership: SessionOwnership;
  /** Marks this node's lease lost (a write found its row gone); returns the error. */
  loseLease: () => StoreLeaseLostError;
  maxSessions: number;
  maxConversationMessages: number;
  maxConversationBytes: number;
  maxCacheBytes: number;
}

interface Position {
  first_seq: string;
  next_seq: string;
  revision: string;
}

/**
 * The daemon's session store on PostgreSQL, shared by the nodes of a fleet: a session saved on
 * one node loads on another. Same tables and delta saves as the SQLite store
 * (docs/decisions/006) — a save writes the messages a turn appended and deletes those the
 * history's bound trimmed, in one transaction — plus ownership: a save claims the session for
 * this node and is refused while another live node owns it, and `claim` lets the daemon ask
 * before it opens a stored session (a client is then told where the session lives).
 */
export class PostgresSessionStore {
  private readonly sql: Sql;
  private readonly cache: ConversationCache<ConversationMessage>;
  private readonly ledger: PostgresAdmissionLedger;
  private closed = false;

  constructor(private readonly parts: PostgresSessionStoreParts) {
    this.sql = parts.sql;
    this.cache = new ConversationCache(parts.maxCacheBytes);
    this.ledger = new PostgresAdmissionLedger(parts.sql);
  }

  /**
   * Stores the record, claiming the session for this node, in one transaction. Rejects with
   * {@link SessionOwnedByOtherNodeError} while another live node owns it, with the lease error
   * once this node's lease is lost, and with a `TypeError` naming a malformed field.
   */
  async save(record: SessionRecord): Promise<void> {
    this.checkOpen();
    checkRecord(record);
    const all = record.conversation;
    const start = boundedStart(all, this.parts.maxConversationMessages, this.parts.maxConversationBytes);
    const messages = start === 0 ? all : all.slice(start);
    let revision: number;
    try {
      revision = await this.sql.begin((tx) => this.write(tx, record, messages));
    } catch (error) {
      this.cache.forget(record.sessionId);
      throw error;
    }
    this.cache.remember(record.sessionId, revision, messages.map(copyMessage));
  }

  /** The stored record, or `undefined` when the store has none for `sessionId`. */
  async load(sessionId: string): Promise<SessionRecord | undefined> {
    this.checkOpen();
    if (typeof sessionId !== 'string') return undefined;
    const found = await this.sql.begin('isolation level repeatable read read only', async (tx) => {
      const [row] = await tx<(SessionRow & { revision: string })[]>`
        SELECT ${tx.unsafe(SESSION_COLUMNS)}, revision FROM sluice_sessions WHERE session_id = ${sessionId}`;
      if (row === undefined) return undefined;
      const messages = await tx<MessageRow[]>`SELECT role, content, name, tool_call_id
        FROM sluice_session_messages WHERE session_id = ${sessionId} ORDER BY seq`;
      return { row, messages: messages.map(fromMessageRow) };
    });
    if (found === undefined) return undefined;
    this.cache.remember(sessionId, Number(found.row.revision), found.messages);
    return { ...toMetadata(found.row), conversation: found.messages.map(copyMessage) };
  }

  /**
   * Takes the session for this node before the daemon opens it: resolves `undefined` once this
   * node owns it, or the live node that does. Rejects once this node's lease is lost.
   */
  async claim(sessionId: string): Promise<SessionOwner | undefined> {
    this.checkOpen();
    const outcome = await this.parts.ownership.claim(this.sql, sessionId);
    if (!outcome.live) throw this.leaseLost();
    return outcome.owner;
  }

  /**
   * Gives up this node's ownership of a session it closed, so another node may open it. After
   * {@link close} it does nothing: the fleet's close removes every ownership of this node.
   */
  async release(sessionId: string): Promise<void> {
    if (this.closed) return;
    await this.parts.ownership.release(this.sql, sessionId);
  }

  /** One page of a workspace's stored sessions, newest first (see `listSessions`). */
  async list(workspaceCwd: string, options: SessionListOptions = {}): Promise<SessionListPage> {
    this.checkOpen();
    return listSessions(this.sql, workspaceCwd, options);
  }

  /** Records prompts accepted and prompts ended, in one statement (the admission ledger). */
  async recordAdmissions(
    accepted: readonly AcceptedPrompt[],
    settled: readonly SettledPrompt[],
  ): Promise<void> {
    this.checkOpen();
    return this.ledger.recordAdmissions(accepted, settled);
  }

  /** The session's accepted prompts that never ended (a killed node's), oldest first; forgets them. */
  async takeUnsettled(sessionId: string): Promise<AcceptedPrompt[]> {
    this.checkOpen();
    return this.ledger.takeUnsettled(sessionId);
  }

  /** Deletes a stored session, its history, ledger and ownership; resolves `false` when there was none. */
  async delete(sessionId: string): Promise<boolean> {
    this.checkOpen();
    this.cache.forget(sessionId);
    return this.sql.begin((tx) => this.remove(tx, sessionId));
  }

  /** Later calls reject with {@link StoreClosedError}; the pool is closed by the fleet. */
  async close(): Promise<void> {
    this.closed = true;
    this.cache.clear();
  }

  /** Runs inside the save transaction; returns the session's new revision. */
  private async write(
    tx: TransactionSql,
    record: SessionRecord,
    messages: readonly ConversationMessage[],
  ): Promise<number> {
    const { sessionId } = record;
    const claim = await this.parts.ownership.claim(tx, sessionId);
    if (!claim.live) throw this.leaseLost();
    if (claim.owner !== undefined) throw new SessionOwnedByOtherNodeError(sessionId, claim.owner.nodeId);
    const [position] = await tx<Position[]>`SELECT first_seq, next_seq, revision FROM sluice_sessions
      WHERE session_id = ${sessionId} FOR UPDATE`;
    let firstSeq = Number(position?.first_seq ?? 0);
    let nextSeq = Number(position?.next_seq ?? 0);
    const revision = Number(position?.revision ?? 0);
    const stored =
      position === undefined ? [] : await this.storedMessages(tx, sessionId, revision, firstSeq, nextSeq);
    if (stored === undefined) {
      // The stored rows do not match the session's bookkeeping: start its history afresh.
      await tx`DELETE FROM sluice_session_messages WHERE session_id = ${sessionId}`;
      firstSeq = nextSeq;
    }
    const kept = stored === undefined ? 0 : conversationOverlap(stored, messages);
    const trimmed = (stored?.length ?? 0) - kept;
    if (trimmed > 0) {
      firstSeq += trimmed;
      await tx`DELETE FROM sluice_session_messages WHERE session_id = ${sessionId} AND seq < ${firstSeq}`;
    }
    if (kept < messages.length) {
      const added = messages.slice(kept);
      const seqs = added.map((_, index) => nextSeq + index);
      nextSeq += added.length;
      await tx`INSERT INTO sluice_session_messages (session_id, seq, role, content, name, tool_call_id)
        SELECT ${sessionId}, * FROM unnest(${seqs}::bigint[], ${added.map((m) => m.role)}::text[],
          ${added.map((m) => m.content)}::text[], ${added.map((m) => m.name ?? null)}::text[],
          ${added.map((m) => m.toolCallId ?? null)}::text[])`;
    }
    await tx`INSERT INTO sluice_sessions (${tx.unsafe(SESSION_COLUMNS)}, revision, saved_order)
      VALUES (${sessionId}, ${record.workspaceCwd}, ${record.cwd}, ${record.scope}, ${record.createdAt},
              ${record.updatedAt}, ${record.displayName ?? null}, ${record.forkedFrom?.sessionId ?? null},
              ${firstSeq}, ${nextSeq}, ${revision + 1}, nextval('sluice_sessions_saved_order_seq'))
      ON CONFLICT (session_id) DO UPDATE SET
        workspace_cwd = excluded.workspace_cwd, cwd = excluded.cwd, scope = excluded.scope,
        created_at = excluded.created_at, updated_at = excluded.updated_at,
        display_name = excluded.display_name, forked_from_session_id = excluded.forked_from_session_id,
        first_seq = excluded.first_seq, next_seq = excluded.next_seq,
        revision = excluded.revision, saved_order = excluded.saved_order`;
    if (position === undefined && this.parts.maxSessions !== Infinity) await this.evictBeyondLimit(tx);
    return revision + 1;
  }

  /** The session's stored messages: cached for this revision, else read back; `undefined` when inconsistent. */
  private async storedMessages(
    tx: TransactionSql,
    sessionId: string,
    revision: number,
    firstSeq: number,
    nextSeq: number,
  ): Promise<readonly ConversationMessage[] | undefined> {
    const cached = this.cache.messages(sessionId, revision);
    if (cached !== undefined) return cached;
    const rows = await tx<MessageRow[]>`SELECT role, content, name, tool_call_id FROM sluice_session_messages
      WHERE session_id = ${sessionId} ORDER BY seq`;
    return rows.length === nextSeq - firstSeq ? rows.map(fromMessageRow) : undefined;
  }

  /**
   * Deletes the least recently saved sessions beyond `maxSessions`. A session that a daemon has
   * open (it has an owner: the one just saved, say) is never evicted under it; the store then
   * holds more until those close, at most the sessions the daemons hold open.
   */
  private async evictBeyondLimit(tx: TransactionSql): Promise<void> {
    const [count] = await tx<{ n: number }[]>`SELECT count(*)::int AS n FROM sluice_sessions`;
    const excess = (count?.n ?? 0) - this.parts.maxSessions;
    if (excess <= 0) return;
    const oldest = await tx<{ session_id: string }[]>`SELECT s.session_id FROM sluice_sessions s
      WHERE NOT EXISTS (SELECT 1 FROM sluice_session_owners o WHERE o.session_id = s.session_id)
      ORDER BY s.saved_order LIMIT ${excess}`;
    for (const { session_id: sessionId } of oldest) {
      await this.remove(tx, sessionId);
      this.cache.forget(sessionId);
    }
  }

  private async remove(tx: TransactionSql, sessionId: string): Promise<boolean> {
    await this.ledger.forgetSession(tx, sessionId);
    await tx`DELETE FROM sluice_session_owners WHERE session_id = ${sessionId}`;
    await tx`DELETE FROM sluice_session_messages WHERE session_id = ${sessionId}`;
    // Its finished model calls go too, as from the SQLite file; a call still running keeps both.
    await tx`DELETE FROM sluice_journal_records r
              WHERE r.session_id = ${sessionId}
                AND EXISTS (SELECT 1 FROM sluice_journal_records x
                             WHERE x.call_id = r.call_id AND x.type = 'model_result')`;
    const deleted = await tx`DELETE FROM sluice_sessions WHERE session_id = ${sessionId}`;
    return deleted.count > 0;
  }

  private leaseLost(): StoreLeaseLostError {
    return this.parts.loseLease();
  }

  private checkOpen(): void {
    if (this.closed) throw new StoreClosedError(this.parts.store);
  }
}
