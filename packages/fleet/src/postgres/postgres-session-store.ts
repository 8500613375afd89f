import {
  DeltaSessionStore,
  SESSION_COLUMNS,
  fromMessageRow,
  historyDelta,
  type ConversationMessage,
  type MessageRow,
  type SessionListOptions,
  type SessionListPage,
  type SessionOwner,
  type SessionRecord,
  type SessionRow,
} from '@sluice/store';
import type { Sql, TransactionSql } from 'postgres';
import { PostgresAdmissionLedger } from './admission-ledger.js';
import { SessionOwnedByOtherNodeError, StoreClosedError, type StoreLeaseLostError } from './errors.js';
import type { PurgeVacuum } from './purge-vacuum.js';
import { listSessions } from './session-listing.js';
import type { SessionOwnership } from './session-ownership.js';

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
  /** Vacuums the tables a purge deleted from, before the purge resolves. */
  vacuum: PurgeVacuum;
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
export class PostgresSessionStore extends DeltaSessionStore {
  private readonly sql: Sql;
  protected readonly ledger: PostgresAdmissionLedger;
  private closed = false;

  constructor(private readonly parts: PostgresSessionStoreParts) {
    super(parts);
    this.sql = parts.sql;
    this.ledger = new PostgresAdmissionLedger(parts.sql);
  }

  /**
   * Stores the record, claiming the session for this node, in one transaction
   * (`DeltaSessionStore.save`). Rejects with {@link SessionOwnedByOtherNodeError} while another
   * live node owns it, and with the lease error once this node's lease is lost.
   */
  protected writeSession(record: SessionRecord, messages: readonly ConversationMessage[]): Promise<number> {
    return this.sql.begin((tx) => this.write(tx, record, messages));
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
    return found === undefined
      ? undefined
      : this.loaded(found.row, Number(found.row.revision), found.messages);
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

  /**
   * Deletes a stored session, its history, ledger, ownership and settled model calls, then
   * vacuums those tables (`--store-purge-vacuum`), so that no row version still holds its text
   * when it resolves; resolves `false` when no session was stored. Rejects when the vacuum
   * failed: the rows are gone, but dead copies may remain until autovacuum (docs/decisions/036).
   */
  async delete(sessionId: string): Promise<boolean> {
    this.checkOpen();
    this.forget(sessionId);
    const deleted = await this.sql.begin((tx) => this.remove(tx, sessionId));
    await this.parts.vacuum.afterDelete();
    return deleted;
  }

  /** Later calls reject with {@link StoreClosedError}; the pool is closed by the fleet. */
  async close(): Promise<void> {
    this.closed = true;
    this.forgetAll();
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
    const firstSeq = Number(position?.first_seq ?? 0);
    const nextSeq = Number(position?.next_seq ?? 0);
    const revision = Number(position?.revision ?? 0);
    const stored =
      position === undefined ? [] : await this.storedMessages(tx, sessionId, revision, firstSeq, nextSeq);
    const delta = historyDelta(stored, messages, firstSeq, nextSeq);
    // The stored rows do not match the session's bookkeeping: start its history afresh.
    if (delta.restart) await tx`DELETE FROM sluice_session_messages WHERE session_id = ${sessionId}`;
    if (delta.trimmed > 0)
      await tx`DELETE FROM sluice_session_messages WHERE session_id = ${sessionId} AND seq < ${delta.firstSeq}`;
    const { added } = delta;
    if (added.length > 0) {
      const seqs = added.map((_, index) => delta.appendAt + index);
      await tx`INSERT INTO sluice_session_messages (session_id, seq, role, content, name, tool_call_id)
        SELECT ${sessionId}, * FROM unnest(${seqs}::bigint[], ${added.map((m) => m.role)}::text[],
          ${added.map((m) => m.content)}::text[], ${added.map((m) => m.name ?? null)}::text[],
          ${added.map((m) => m.toolCallId ?? null)}::text[])`;
    }
    await tx`INSERT INTO sluice_sessions (${tx.unsafe(SESSION_COLUMNS)}, revision, saved_order)
      VALUES (${sessionId}, ${record.workspaceCwd}, ${record.cwd}, ${record.scope}, ${record.createdAt},
              ${record.updatedAt}, ${record.displayName ?? null}, ${record.forkedFrom?.sessionId ?? null},
              ${record.model ?? null}, ${delta.firstSeq}, ${delta.nextSeq}, ${revision + 1}, nextval('sluice_sessions_saved_order_seq'))
      ON CONFLICT (session_id) DO UPDATE SET
        workspace_cwd = excluded.workspace_cwd, cwd = excluded.cwd, scope = excluded.scope,
        created_at = excluded.created_at, updated_at = excluded.updated_at,
        display_name = excluded.display_name, forked_from_session_id = excluded.forked_from_session_id,
        model = excluded.model, first_seq = excluded.first_seq, next_seq = excluded.next_seq,
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
    const cached = this.cachedMessages(sessionId, revision);
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
      this.forget(sessionId);
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

  protected checkOpen(): void {
    if (this.closed) throw new StoreClosedError(this.parts.store);
  }
}
