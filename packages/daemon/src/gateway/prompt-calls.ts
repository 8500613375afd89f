import type { JournalRecord, ModelResultRecord } from '@sluice/runtime';

/** One model call of a prompt as `GET /session/:id/prompts/:promptId/calls` lists it: no prompt text. */
export interface PromptCall {
  callId: string;
  taskId: string;
  /** Admission time, ISO 8601. */
  at: string;
  kind: 'complete' | 'stream';
  provider: string;
  model: string;
  timeoutMs: number;
  /** `pending` until the result is recorded. */
  outcome: 'success' | 'error' | 'pending';
  stopReason?: string;
  usage?: { inputTokens: number; outputTokens: number };
  durationMs?: number;
  /** Names of the tools the model called. */
  toolCalls?: string[];
  error?: { code: string; message: string };
}

/** The calls made for `promptId`, in admission order, from a session's journal records. */
export function promptCalls(records: readonly JournalRecord[], promptId: string): PromptCall[] {
  const results = new Map<string, ModelResultRecord>();
  for (const record of records) if (record.type === 'model_result') results.set(record.callId, record);
  const calls: PromptCall[] = [];
  for (const record of records) {
    if (record.type !== 'model_request' || record.turnId !== promptId) continue;
    const { options } = record;
    const call: PromptCall = {
      callId: record.callId,
      taskId: record.taskId,
      at: record.at,
      kind: options.kind,
      provider: options.provider,
      model: options.model,
      timeoutMs: options.timeoutMs,
      outcome: 'pending',
    };
    const result = results.get(record.callId);
    if (result !== undefined) {
      call.outcome = result.outcome;
      call.durationMs = result.durationMs;
      if (result.stopReason !== undefined) call.stopReason = result.stopReason;
      if (result.usage !== undefined) call.usage = result.usage;
      if (result.toolCalls !== undefined) call.toolCalls = result.toolCalls.map((tool) => tool.name);
      if (result.error !== undefined) call.error = result.error;
    }
    calls.push(call);
  }
  return calls;
}
