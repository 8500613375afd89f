import * as z from 'zod/mini';
import { BUDGET_ID, parseBudgetRequest } from '../../budgets/index.js';
import { documented } from './common-schemas.js';
import type { FieldExplainer } from './request-body.js';

const limit = (what: string) => z.optional(documented(z.int().check(z.gte(0)), what));

/** The limits of a durable budget; an absent one is unlimited. */
export const BudgetLimits = z.strictObject({
  maxCalls: limit('Model calls in all.'),
  maxInputTokens: limit('Input tokens in all.'),
  maxOutputTokens: limit('Output tokens in all.'),
  maxCostMinor: limit('Cost in minor currency units (cents), when the daemon has prices.'),
  maxActivityMs: limit('Time during which at least one of its calls was in flight.'),
});

/** `POST /budgets` (issue 21): a durable task budget. */
export const BudgetBody = z.strictObject({
  budgetId: z.optional(
    documented(
      z.string().check(z.regex(BUDGET_ID)),
      'Its id (also its task id in the journal); made up when absent.',
    ),
  ),
  limits: z.optional(BudgetLimits),
});

/** `:id` of a budget route. */
export const BudgetParams = z.object({ id: documented(z.string(), 'The budget id.') });

/** What a budget route answers: its limits, what it spent, and why it refuses calls, if it does. */
export const BudgetState = z.looseObject({
  budgetId: z.string(),
  limits: BudgetLimits,
  spent: z.looseObject({
    calls: z.number(),
    inputTokens: z.number(),
    outputTokens: z.number(),
    costMinor: z.number(),
    activityMs: z.number(),
  }),
  stoppedReason: z.optional(z.string()),
});

/** The `invalid_budget` error the hand-written check gives for a body the schema refused. */
export const explainBudgetBody: FieldExplainer = (_issue, body) => {
  try {
    parseBudgetRequest(body);
  } catch (error) {
    return error as Error;
  }
  return undefined;
};
