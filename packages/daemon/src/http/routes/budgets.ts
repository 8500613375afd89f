import type { FastifyInstance } from 'fastify';
import { parseBudgetId, parseBudgetRequest, type DurableBudgets } from '../../budgets/index.js';
import { assertAdmitting } from '../request-helpers.js';
import { BudgetBody, explainBudgetBody } from '../schemas/budget-schemas.js';
import { parseBody } from '../schemas/request-body.js';
import type { SessionBridge } from '../../sessions/index.js';

/**
 * Durable task budgets (issue 21): `POST /budgets {budgetId?, limits}` → `201` with the
 * budget's state; `GET /budgets/:id` → its limits, what it spent (recovered from the journal
 * after a restart, plus this process's calls) and `stoppedReason` once it refuses calls.
 */
export function budgetRoutes(app: FastifyInstance, budgets: DurableBudgets, sessions: SessionBridge): void {
  app.post('/budgets', async (request, reply) => {
    // The schema documents and checks the body; the budget layer's own check builds it.
    parseBody(BudgetBody, request, explainBudgetBody);
    const budget = parseBudgetRequest((request.body ?? {}) as Record<string, unknown>);
    assertAdmitting(sessions);
    return reply.code(201).send(await budgets.create(budget));
  });

  app.get<{ Params: { id: string } }>('/budgets/:id', async (request) => {
    const budgetId = parseBudgetId(request.params.id, 'the budget id in the path') as string;
    return budgets.state(budgetId);
  });
}
