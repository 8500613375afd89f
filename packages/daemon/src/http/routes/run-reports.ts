import { runReportOf, type JournalRecord, type TaskRunReport } from '@sluice/runtime';
import * as z from 'zod/mini';
import type { SessionBridge } from '../../sessions/index.js';
import { defineRoute } from '../route.js';
import { ErrorBody } from '../schemas/common-schemas.js';
import { PromptParams } from '../schemas/prompt-schemas.js';
import { EXAMPLE } from '../openapi/route-examples.js';
import { CodedError } from '@sluice/protocol';

/** A prompt's run report: its model calls, their usage, cost and phase times, with totals. */
export interface PromptRunReport extends TaskRunReport {
  promptId: string;
  sessionId: string;
}

/** A prompt's run report: its model calls and their totals, from the journal (no prompt text). */
const RunReport = z.looseObject({
  promptId: z.string(),
  sessionId: z.string(),
  calls: z.array(z.looseObject({ callId: z.string(), outcome: z.string() })),
  totals: z.looseObject({ calls: z.number(), inputTokens: z.number(), outputTokens: z.number() }),
});

/**
 * `GET /session/:id/prompts/:promptId/report`: the prompt's `TaskRunReport`, read from the
 * journal, so it reads the same after a restart; no prompt or answer text. `404
 * prompt_not_found` when the journal holds no call of the prompt and the session is not
 * running or queueing it.
 */
export const RUN_REPORT_ROUTE = defineRoute<{ id: string; promptId: string }>(
  {
    method: 'GET',
    path: '/session/:id/prompts/:promptId/report',
    tag: 'operations',
    summary: "A prompt's run report: calls, tokens, cost, time per phase",
    description:
      "The prompt's model calls with their usage and time in each phase (queued, preparing, executing), and totals with the cost in minor units. From the journal: it reads the same after a restart; no prompt or answer text.",
    params: PromptParams,
    responses: {
      200: {
        description: 'The report, from the journal.',
        schema: RunReport,
        example: {
          promptId: EXAMPLE.promptId,
          sessionId: EXAMPLE.sessionId,
          calls: [
            {
              callId: EXAMPLE.callId,
              outcome: 'success',
              usage: { inputTokens: 1, outputTokens: 2 },
              durationMs: 148,
              phases: { queuedMs: 0, preparingMs: 147, executingMs: 1 },
            },
          ],
          totals: {
            calls: 1,
            inputTokens: 1,
            outputTokens: 2,
            costMinor: 0,
            queuedMs: 0,
            preparingMs: 147,
            executingMs: 1,
            wallMs: 148,
          },
        },
      },
      404: { description: '`prompt_not_found`.', schema: ErrorBody },
    },
  },
  {
    handler:
      ({ journal, sessions }) =>
      async (request): Promise<PromptRunReport> => {
        const { id: sessionId, promptId } = request.params;
        const read = journal.recordsForSession?.bind(journal);
        if (read === undefined)
          throw new CodedError('journal_not_readable', 'This daemon journal cannot be read back');
        const records = promptRecords(await read(sessionId), promptId);
        if (records.length === 0 && !isPending(sessions, sessionId, promptId))
          throw new CodedError(
            'prompt_not_found',
            `No model call of prompt "${promptId}" is recorded for session "${sessionId}"`,
            { sessionId, promptId },
          );
        return { promptId, sessionId, ...runReportOf(records) };
      },
  },
);

/** The records of `promptId`'s calls: its requests (`turnId`) and their results. */
function promptRecords(records: readonly JournalRecord[], promptId: string): JournalRecord[] {
  const calls = new Set<string>();
  const out: JournalRecord[] = [];
  for (const record of records) {
    if (record.type === 'model_request' ? record.turnId === promptId : calls.has(record.callId)) {
      if (record.type === 'model_request') calls.add(record.callId);
      out.push(record);
    }
  }
  return out;
}

function isPending(sessions: SessionBridge, sessionId: string, promptId: string): boolean {
  try {
    return sessions.pendingPrompts(sessionId).some((prompt) => prompt.promptId === promptId);
  } catch {
    return false; // not open here: only the journal knows of it
  }
}
