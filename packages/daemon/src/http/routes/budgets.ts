import type { FastifyInstance, preHandlerHookHandler } from 'fastify';
import { parseBudgetId, parseBudgetRequest, type DurableBudgets } from '../../budgets/index.js';
import { assertAdmitting, objectBody } from '../request-helpers.js';
import type { SessionBridge } from '../../sessions/index.js';

/**
 * Durable task budgets (issue 21): `POST /budgets {budgetId?, limits}` → `201` with the
 * budget's state; `GET /budgets/:id` → its limits, what it spent (recovered from the journal
 * after a restart, plus this process's calls) and `stoppedReason` once it refuses calls.
 */
export function budgetRoutes(app: FastifyInstance, budgets: DurableBudgets, sessions: SessionBridge): void {
  app.post('/budgets', async (request, reply) => {
    const budget = parseBudgetRequest(objectBody(request));
    assertAdmitting(sessions);
    return reply.code(201).send(await budgets.create(budget));
  });

  app.get<{ Params: { id: string } }>('/budgets/:id', async (request) => {
    const budgetId = parseBudgetId(request.params.id, 'the budget id in the path') as string;
    return budgets.state(budgetId);
  });
}

/**
 * The prompt route's check of its `budgetId`, before admission: a malformed id is a `400`, an
 * unknown one a `404 budget_not_found`, so a prompt is never answered `202` for a budget that
 * does not exist. A budget open in this process costs no store read; a prompt without a
 * budget costs one property read.
 */
export function promptBudgetCheck(budgets: DurableBudgets): preHandlerHookHandler {
  return (request, _reply, done) => {
    const body = request.body as Record<string, unknown> | null | undefined;
    const given = typeof body === 'object' && body !== null ? body['budgetId'] : undefined;
    if (given === undefined) return done();
    let budgetId: string;
    try {
      budgetId = parseBudgetId(given, 'budgetId') as string;
    } catch (error) {
      return done(error as Error);
    }
    if (budgets.isOpen(budgetId)) return done();
    budgets.open(budgetId).then(
      () => done(),
      (error: unknown) => done(error as Error),
    );
  };
}
