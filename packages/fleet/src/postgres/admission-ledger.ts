import type { Sql, TransactionSql } from 'postgres';
import type { AcceptedPrompt, SettledPrompt } from '@sluice/store';

/**
 * The admission ledger in `sluice_session_accepted_prompts` (docs/decisions/016): prompts
 * answered `202` that have not ended, so that whichever node loads the session next ends each
 * with `turn_error daemon_restarted`. One statement per batch of accepted and ended prompts.
 */
export class PostgresAdmissionLedger {
  constructor(private readonly sql: Sql) {}

  /** Records, in one transaction, prompts accepted and prompts ended since the last call. */
  async recordAdmissions(
    accepted: readonly AcceptedPrompt[],
    settled: readonly SettledPrompt[],
  ): Promise<void> {
    if (accepted.length === 0 && settled.length === 0) return;
    await this.sql`
      WITH added AS (
        INSERT INTO sluice_session_accepted_prompts (session_id, prompt_id, accepted_at)
        SELECT * FROM unnest(${accepted.map((p) => p.sessionId)}::text[], ${accepted.map((p) => p.promptId)}::text[],
                             ${accepted.map((p) => p.acceptedAt)}::bigint[])
        ON CONFLICT DO NOTHING RETURNING 1),
      removed AS (
        DELETE FROM sluice_session_accepted_prompts a
        USING unnest(${settled.map((p) => p.sessionId)}::text[], ${settled.map((p) => p.promptId)}::text[]) AS s(session_id, prompt_id)
        WHERE a.session_id = s.session_id AND a.prompt_id = s.prompt_id RETURNING 1)
      SELECT (SELECT count(*) FROM added) AS added, (SELECT count(*) FROM removed) AS removed`;
  }

  /** The session's accepted prompts that never ended, oldest first; forgets them. */
  async takeUnsettled(sessionId: string): Promise<AcceptedPrompt[]> {
    const rows = await this.sql<{ prompt_id: string; accepted_at: string }[]>`
      DELETE FROM sluice_session_accepted_prompts WHERE session_id = ${sessionId}
      RETURNING prompt_id, accepted_at`;
    return rows
      .map((row) => ({ sessionId, promptId: row.prompt_id, acceptedAt: Number(row.accepted_at) }))
      .sort(
        (a, b) =>
          a.acceptedAt - b.acceptedAt || (a.promptId < b.promptId ? -1 : a.promptId > b.promptId ? 1 : 0),
      );
  }

  /** Forgets a deleted session's entries, inside the store's delete transaction. */
  async forgetSession(tx: TransactionSql, sessionId: string): Promise<void> {
    await tx`DELETE FROM sluice_session_accepted_prompts WHERE session_id = ${sessionId}`;
  }
}
