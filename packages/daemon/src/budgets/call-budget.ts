import type { TaskBudget } from '@sluice/runtime';
import { parseBudgetId } from './budget-request.js';
import { BudgetConflictError, BudgetForbiddenError, BudgetNotFoundError } from './errors.js';

/** The header a model-gateway call names its durable budget with. */
export const BUDGET_HEADER = 'x-sluice-budget';

/**
 * The budget a model-gateway call is charged to: the budget of the turn it is made for (a
 * session credential during a prompt sent with `budgetId`), else the one its
 * `X-Sluice-Budget` header names, else none. A header naming another budget than the turn's
 * is refused (`409`): a turn's calls cannot be moved to another budget. A session credential
 * (`caller`) may name only a budget attached to its session (`403` otherwise); the daemon token
 * (no caller) may name any.
 */
export async function gatewayCallBudget(
  header: string | string[] | undefined,
  caller: { readonly budgetId?: string | undefined; readonly budgets?: ReadonlySet<string> } | undefined,
  budgets: { open(budgetId: string): Promise<TaskBudget> } | undefined,
): Promise<TaskBudget | undefined> {
  const named = parseBudgetId(header, 'X-Sluice-Budget');
  const turnBudget = caller?.budgetId;
  if (turnBudget !== undefined && named !== undefined && named !== turnBudget)
    throw new BudgetConflictError(named, turnBudget);
  if (caller !== undefined && named !== undefined && caller.budgets?.has(named) !== true)
    throw new BudgetForbiddenError(named);
  const budgetId = turnBudget ?? named;
  if (budgetId === undefined) return undefined;
  if (budgets === undefined) throw new BudgetNotFoundError(budgetId);
  return budgets.open(budgetId);
}
