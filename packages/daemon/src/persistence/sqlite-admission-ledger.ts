import type Database from 'better-sqlite3';
import type { AcceptedPrompt, AdmissionLedgerStore, SettledPrompt } from '@sluice/store';

interface AcceptedRow {
  prompt_id: string;
  accepted_at: number;
}

/**
 * The admission ledger in the session store's SQLite file (`sluice_session_accepted_prompts`):
 * one short transaction per batch of accepted and ended prompts.
 */
export class SqliteAdmissionLedger implements AdmissionLedgerStore {
  private readonly insert: Database.Statement<[string, string, number]>;
  private readonly remove: Database.Statement<[string, string]>;
  private readonly select: Database.Statement<[string], AcceptedRow>;
  private readonly removeSession: Database.Statement<[string]>;
  private readonly record: (accepted: readonly AcceptedPrompt[], settled: readonly SettledPrompt[]) => void;
  private readonly take: (sessionId: string) => AcceptedPrompt[];

  constructor(private readonly db: Database.Database) {
    this.insert = db.prepare(
      `INSERT OR IGNORE INTO sluice_session_accepted_prompts (session_id, prompt_id, accepted_at)
       VALUES (?, ?, ?)`,
    );
    this.remove = db.prepare(
      'DELETE FROM sluice_session_accepted_prompts WHERE session_id = ? AND prompt_id = ?',
    );
    this.select = db.prepare(
      `SELECT prompt_id, accepted_at FROM sluice_session_accepted_prompts
       WHERE session_id = ? ORDER BY accepted_at, prompt_id`,
    );
    this.removeSession = db.prepare('DELETE FROM sluice_session_accepted_prompts WHERE session_id = ?');
    this.record = db.transaction((accepted: readonly AcceptedPrompt[], settled: readonly SettledPrompt[]) => {
      for (const prompt of accepted) this.insert.run(prompt.sessionId, prompt.promptId, prompt.acceptedAt);
      for (const prompt of settled) this.remove.run(prompt.sessionId, prompt.promptId);
    }).immediate;
    this.take = db.transaction((sessionId: string): AcceptedPrompt[] => {
      const rows = this.select.all(sessionId);
      if (rows.length > 0) this.removeSession.run(sessionId);
      return rows.map((row) => ({ sessionId, promptId: row.prompt_id, acceptedAt: row.accepted_at }));
    }).immediate;
  }

  async recordAdmissions(
    accepted: readonly AcceptedPrompt[],
    settled: readonly SettledPrompt[],
  ): Promise<void> {
    this.record(accepted, settled);
  }

  async takeUnsettled(sessionId: string): Promise<AcceptedPrompt[]> {
    return this.take(sessionId);
  }

  /** Forgets a deleted session's entries (inside the store's delete transaction). */
  forgetSession(sessionId: string): void {
    this.removeSession.run(sessionId);
  }
}
