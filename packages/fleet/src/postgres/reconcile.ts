import { interruptedResult } from '@sluice/runtime';
import type { Sql, TransactionSql } from 'postgres';
import { batchJson, emptyBatchText, insertRecords, pushRecord } from './journal-batch-text.js';

interface OpenRequest {
  call_id: string;
  task_id: string;
  session_id: string | null;
  turn_id: string | null;
  at: string;
}

/** What one settling of dead nodes did. */
export interface SettledNodes {
  /** The nodes found dead and removed. */
  nodes: string[];
  /** Their model calls left without a result, now recorded `interrupted` (never re-run). */
  interruptedCalls: number;
}

/**
 * Settles every node whose lease expired (other than `nodeId`): gives each model request it
 * recorded without a result a result with error code `interrupted` — written by this node — and
 * removes its row, which frees its sessions (their ownership rows go with it). One transaction:
 * the row's removal takes its lock, so two nodes settling at once settle each dead node once,
 * and a dead node's own writes (fenced on its row, see PostgresJournal) cannot land after it.
 * Only the dead nodes' requests are read, through the index of requests by node.
 */
export async function settleDeadNodes(sql: Sql, nodeId: string, wallNowMs: number): Promise<SettledNodes> {
  const expired =
    await sql`SELECT 1 FROM sluice_nodes WHERE expires_at < ${wallNowMs} AND node_id <> ${nodeId} LIMIT 1`;
  if (expired.length === 0) return { nodes: [], interruptedCalls: 0 };
  return sql.begin(async (tx) => {
    const dead = await tx<{ node_id: string }[]>`
      DELETE FROM sluice_nodes WHERE expires_at < ${wallNowMs} AND node_id <> ${nodeId} RETURNING node_id`;
    const nodes = dead.map((row) => row.node_id);
    if (nodes.length === 0) return { nodes, interruptedCalls: 0 };
    const open = await tx<OpenRequest[]>`
      SELECT r.call_id, r.task_id, r.session_id, r.turn_id, r.at FROM sluice_journal_records r
      WHERE r.node_id = ANY(${nodes}::text[]) AND r.type = 'model_request'
        AND NOT EXISTS (SELECT 1 FROM sluice_journal_records s
                        WHERE s.call_id = r.call_id AND s.type = 'model_result')
      ORDER BY r.seq`;
    if (open.length > 0) await insertInterrupted(tx, nodeId, open, wallNowMs);
    return { nodes, interruptedCalls: open.length };
  });
}

async function insertInterrupted(
  tx: TransactionSql,
  nodeId: string,
  open: readonly OpenRequest[],
  wallNowMs: number,
): Promise<void> {
  const at = new Date(wallNowMs).toISOString();
  const batch = emptyBatchText();
  for (const request of open) {
    const record = interruptedResult(
      {
        callId: request.call_id,
        taskId: request.task_id,
        sessionId: request.session_id,
        turnId: request.turn_id,
        at: request.at,
      },
      at,
      wallNowMs,
    );
    pushRecord(batch, record, JSON.stringify(record));
  }
  await tx`${insertRecords(tx, nodeId, batchJson(batch))} ON CONFLICT (call_id, type) DO NOTHING`;
}
