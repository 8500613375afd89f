import { CodedError } from '@sluice/protocol';
import { promptCalls } from '../../gateway/index.js';
import { defineRoute } from '../route.js';
import { ErrorBody } from '../schemas/common-schemas.js';
import { PromptCalls } from '../schemas/gateway-schemas.js';
import { PromptParams } from '../schemas/prompt-schemas.js';
import { EXAMPLE } from '../openapi/route-examples.js';

/** `GET /session/:id/prompts/:promptId/calls`: a prompt's model calls, from the journal. */
export const PROMPT_CALLS_ROUTE = defineRoute<{ id: string; promptId: string }>(
  {
    method: 'GET',
    path: '/session/:id/prompts/:promptId/calls',
    tag: 'gateway',
    summary: "A prompt's model calls, from the journal (no prompt text)",
    description:
      'Each call the agent made through the gateway for the prompt: provider, model, outcome, duration, stop reason and token usage. Read from the journal, so it reads the same after a restart.',
    params: PromptParams,
    responses: {
      200: {
        description: 'In admission order.',
        schema: PromptCalls,
        example: {
          calls: [
            {
              callId: EXAMPLE.callId,
              taskId: EXAMPLE.sessionId,
              at: '2026-12-03T15:59:07.453Z',
              kind: 'stream',
              provider: 'echo',
              model: 'echo-1',
              timeoutMs: 600000,
              outcome: 'success',
              durationMs: 148,
              stopReason: 'end_turn',
              usage: { inputTokens: 1, outputTokens: 2 },
            },
          ],
        },
      },
      501: { description: '`journal_not_readable`: this journal cannot be read back.', schema: ErrorBody },
    },
  },
  {
    handler:
      ({ journal }) =>
      async (request) => {
        const read = journal.recordsForSession?.bind(journal);
        if (read === undefined)
          throw new CodedError('journal_not_readable', 'This daemon journal cannot be read back');
        const records = await read(request.params.id);
        return { calls: promptCalls(records, request.params.promptId) };
      },
  },
);
