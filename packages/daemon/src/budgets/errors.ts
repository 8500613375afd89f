import { HttpError } from '../wire/index.js';

/** The stable codes of durable budgets' errors (issue 21). */
export type BudgetErrorCode =
  | 'invalid_budget'
  | 'budget_not_found'
  | 'budget_exists'
  | 'budget_limit_reached'
  | 'budget_conflict'
  | 'journal_not_readable';

/** A budget request that cannot be used as sent: 400, naming the field and what to fix. */
export class InvalidBudgetError extends HttpError {
  constructor(message: string) {
    super(400, 'invalid_budget', message);
  }
}

/** No durable budget has this id: 404 (at admission, before a prompt's 202). */
export class BudgetNotFoundError extends HttpError {
  constructor(readonly budgetId: string) {
    super(404, 'budget_not_found', `No budget with id "${budgetId}"; create it with POST /budgets`, {
      budgetId,
    });
  }
}

/** `POST /budgets` named an id that is taken: 409. Budgets are never redefined. */
export class BudgetExistsError extends HttpError {
  constructor(readonly budgetId: string) {
    super(
      409,
      'budget_exists',
      `A budget with id "${budgetId}" exists; read it with GET /budgets/${budgetId}`,
      {
        budgetId,
      },
    );
  }
}

/** The store holds `maxBudgets` definitions already: 409 until the operator raises the limit. */
export class BudgetLimitReachedError extends HttpError {
  constructor(readonly limit: number) {
    super(409, 'budget_limit_reached', `This daemon keeps at most ${limit} budgets (--max-budgets)`, {
      limit,
    });
  }
}

/**
 * A gateway call named a budget (`X-Sluice-Budget`) other than the one of the turn it is made
 * for: 409. A turn's calls are charged to the turn's budget; an agent cannot move them.
 */
export class BudgetConflictError extends HttpError {
  constructor(named: string, turnBudget: string) {
    super(
      409,
      'budget_conflict',
      `This call belongs to a turn charged to budget "${turnBudget}"; X-Sluice-Budget names "${named}"`,
      { budgetId: turnBudget },
    );
  }
}

/** The journal has no read side, so a durable budget's spend cannot be recovered: 501. */
export class JournalNotReadableError extends HttpError {
  constructor() {
    super(
      501,
      'journal_not_readable',
      'This daemon journal cannot be read back, so budgets cannot be recovered',
    );
  }
}
