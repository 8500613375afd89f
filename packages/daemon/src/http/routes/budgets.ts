import { parseBudgetId, parseBudgetRequest } from '../../budgets/index.js';
import { badInput } from '../openapi/route-doc.js';
import { assertAdmitting } from '../request-helpers.js';
import { defineRoute, type Route } from '../route.js';
import { BudgetBody, BudgetParams, BudgetState, explainBudgetBody } from '../schemas/budget-schemas.js';
import { ErrorBody } from '../schemas/common-schemas.js';
import { parseBody } from '../schemas/request-body.js';

/**
 * Durable task budgets (issue 21): `POST /budgets {budgetId?, limits}` → `201` with the
 * budget's state; `GET /budgets/:id` → its limits, what it spent (recovered from the journal
 * after a restart, plus this process's calls) and `stoppedReason` once it refuses calls.
 */
const BUDGET_EXAMPLE = { budgetId: 'nightly-refactor', limits: { maxCalls: 200, maxOutputTokens: 400000 } };
const NOTHING_SPENT = { calls: 0, inputTokens: 0, outputTokens: 0, costMinor: 0, activityMs: 0 };

export const BUDGET_ROUTES: readonly Route[] = [
  defineRoute(
    {
      method: 'POST',
      path: '/budgets',
      tag: 'operations',
      summary: 'Create a durable task budget',
      description:
        "Its spend is the journal's calls with its id as task id, so it survives a restart. Attach a prompt with `budgetId`, a gateway call with `X-Sluice-Budget`.",
      body: {
        schema: BudgetBody,
        required: false,
        example: { budgetId: 'nightly-refactor', limits: { maxCalls: 200, maxOutputTokens: 400000 } },
      },
      responses: {
        201: {
          description: 'Created, with what it spent so far (nothing).',
          schema: BudgetState,
          example: { ...BUDGET_EXAMPLE, spent: NOTHING_SPENT },
        },
        400: badInput(['invalid_budget', 'invalid_body']),
        409: { description: '`budget_exists` or `budget_limit_reached`.', schema: ErrorBody },
      },
    },
    {
      handler:
        ({ budgets, sessions }) =>
        async (request, reply) => {
          // The schema documents and checks the body; the budget layer's own check builds it.
          parseBody(BudgetBody, request, explainBudgetBody);
          const budget = parseBudgetRequest((request.body ?? {}) as Record<string, unknown>);
          assertAdmitting(sessions);
          return reply.code(201).send(await budgets.create(budget));
        },
    },
  ),
  defineRoute<{ id: string }>(
    {
      method: 'GET',
      path: '/budgets/:id',
      tag: 'operations',
      summary: "A durable budget's limits and spend",
      description:
        'What it spent is recovered from the journal after a restart, plus the calls of this process; `stoppedReason` appears once a limit is reached and the budget refuses calls.',
      params: BudgetParams,
      responses: {
        200: {
          description: 'Its limits, spend and `stoppedReason` once it refuses calls.',
          schema: BudgetState,
          example: {
            ...BUDGET_EXAMPLE,
            spent: { calls: 200, inputTokens: 81234, outputTokens: 52870, costMinor: 0, activityMs: 913402 },
            stoppedReason: 'calls',
          },
        },
        400: badInput(['invalid_budget']),
        404: { description: '`budget_not_found`.', schema: ErrorBody },
      },
    },
    {
      handler:
        ({ budgets }) =>
        async (request) => {
          const budgetId = parseBudgetId(request.params.id, 'the budget id in the path') as string;
          return budgets.state(budgetId);
        },
    },
  ),
];
