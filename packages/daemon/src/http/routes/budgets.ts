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
export const BUDGET_ROUTES: readonly Route[] = [
  defineRoute(
    {
      method: 'POST',
      path: '/budgets',
      tag: 'operations',
      summary: 'Create a durable task budget',
      description:
        "Its spend is the journal's calls with its id as task id, so it survives a restart. Attach a prompt with `budgetId`, a gateway call with `X-Sluice-Budget`.",
      body: { schema: BudgetBody, required: false },
      responses: {
        201: { description: 'Created, with what it spent so far (nothing).', schema: BudgetState },
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
      params: BudgetParams,
      responses: {
        200: {
          description: 'Its limits, spend and `stoppedReason` once it refuses calls.',
          schema: BudgetState,
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
