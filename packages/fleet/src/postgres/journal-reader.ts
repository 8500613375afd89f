import { JournalClosedError, type JournalRecord, type ModelResultRecord } from '@sluice/runtime';
import type { Sql } from 'postgres';

/** One model call as the journal holds it: its request and, once it ended, its result. */
export interface JournaledCall {
  callId: string;
  taskId: string;
  sessionId?: string;
  /** The prompt the call was made for (the record's `turnId`). */
  promptId?: string;
  /** Admission time of the request, ISO 8601. */
  at: string;
  /** The result record; absent while the call runs (or its daemon died and it is not yet settled). */
  result?: ModelResultRecord;
}

/**
 * The journal's read side: committed records by call, task, session or prompt, and each call
 * of a session with its result (usage, cost, outcome) — what task budgets and audits read.
 * Reads go through the pool, never wait for the writer, and see committed records in commit
 * order.
 */
export class PostgresJournalReader {
  private closed = false;

  constructor(
    private readonly sql: Sql,
    private readonly store: string,
  ) {}

  /** Records of one model call, in commit order. */
  recordsForCall(callId: string): Promise<JournalRecord[]> {
    return this.bodies(
      this.sql`SELECT body FROM sluice_journal_records WHERE call_id = ${callId} ORDER BY seq`,
    );
  }

  /** Records of one task, in commit order (a temporary task's through its one call). */
  recordsForTask(taskId: string): Promise<JournalRecord[]> {
    const callId = taskId.startsWith('tmp-') ? taskId.slice('tmp-'.length) : '';
    return this.bodies(this.sql`SELECT body FROM (
        SELECT seq, body FROM sluice_journal_records WHERE task_id = ${taskId} AND task_id <> 'tmp-' || call_id
        UNION ALL
        SELECT seq, body FROM sluice_journal_records WHERE call_id = ${callId} AND task_id = 'tmp-' || call_id
      ) t ORDER BY seq`);
  }

  /** Records naming a session, in commit order. */
  recordsForSession(sessionId: string): Promise<JournalRecord[]> {
    return this.bodies(
      this.sql`SELECT body FROM sluice_journal_records WHERE session_id = ${sessionId} ORDER BY seq`,
    );
  }

  /**
   * Records of the calls made for one prompt of a session, in commit order: their requests carry
   * the prompt's id (`turnId`), their results are found by call.
   */
  recordsForPrompt(sessionId: string, promptId: string): Promise<JournalRecord[]> {
    return this.bodies(this.sql`SELECT body FROM sluice_journal_records WHERE call_id IN (
        SELECT call_id FROM sluice_journal_records
        WHERE session_id = ${sessionId} AND turn_id = ${promptId} AND type = 'model_request')
      ORDER BY seq`);
  }

  /** The calls of a session (of one prompt, when given), oldest first, each with its result. */
  async callsForSession(sessionId: string, promptId?: string): Promise<JournaledCall[]> {
    const records =
      promptId === undefined
        ? await this.recordsForSession(sessionId)
        : await this.recordsForPrompt(sessionId, promptId);
    const calls = new Map<string, JournaledCall>();
    for (const record of records) {
      if (record.type === 'model_request') {
        const call: JournaledCall = { callId: record.callId, taskId: record.taskId, at: record.at };
        if (record.sessionId !== undefined) call.sessionId = record.sessionId;
        if (record.turnId !== undefined) call.promptId = record.turnId;
        calls.set(record.callId, call);
      } else {
        const call = calls.get(record.callId);
        if (call !== undefined) call.result = record;
      }
    }
    return [...calls.values()];
  }

  /** Number of committed records. */
  async count(): Promise<number> {
    this.checkOpen();
    const [row] = await this.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM sluice_journal_records`;
    return row?.n ?? 0;
  }

  /** Reads after this reject with {@link JournalClosedError}. */
  close(): void {
    this.closed = true;
  }

  private async bodies(query: PromiseLike<readonly { body: JournalRecord }[]>): Promise<JournalRecord[]> {
    this.checkOpen();
    return (await query).map((row) => row.body);
  }

  private checkOpen(): void {
    if (this.closed) throw new JournalClosedError(this.store);
  }
}
