export { BUDGET_ID, parseBudgetId, parseBudgetRequest, type BudgetRequest } from './budget-request.js';
export {
  MemoryBudgetStore,
  type BudgetDefinition,
  type BudgetInsert,
  type BudgetStore,
} from './budget-store.js';
export {
  DEFAULT_MAX_LIVE_BUDGETS,
  DurableBudgets,
  type BudgetSpent,
  type BudgetState,
  type DurableBudgetsOptions,
} from './durable-budgets.js';
export {
  BudgetConflictError,
  BudgetForbiddenError,
  BudgetExistsError,
  BudgetLimitReachedError,
  BudgetNotFoundError,
  InvalidBudgetError,
  JournalNotReadableError,
  type BudgetErrorCode,
} from './errors.js';
export { BUDGET_HEADER, gatewayCallBudget } from './call-budget.js';
