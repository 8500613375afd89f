import { CataloguedError, type CodesOf } from '@sluice/protocol';

/** The stable codes of durable budgets' errors (issue 21); their wire forms are in the catalogue. */
export type BudgetErrorCode = CodesOf<
  | 'invalid_budget'
  | 'budget_not_found'
  | 'budget_exists'
  | 'budget_limit_reached'
  | 'budget_conflict'
  | 'budget_forbidden'
  | 'journal_not_readable'
>;

/** Base of durable budgets' errors: a stable `code`, never a message to match. */
export abstract class DurableBudgetError extends CataloguedError<BudgetErrorCode> {}

/** A budget request that cannot be used as sent (`400`), naming the field and what to fix. */
export class InvalidBudgetError extends DurableBudgetError {
  readonly code = 'invalid_budget';
}

/** No durable budget has this id (`404`; at admission, before a prompt's 202). */
export class BudgetNotFoundError extends DurableBudgetError {
  readonly code = 'budget_not_found';
  constructor(readonly budgetId: string) {
    super(`No budget with id "${budgetId}"; create it with POST /budgets`);
  }

  override wireDetails(): Record<string, unknown> {
    return { budgetId: this.budgetId };
  }
}

/** `POST /budgets` named an id that is taken (`409`). Budgets are never redefined. */
export class BudgetExistsError extends DurableBudgetError {
  readonly code = 'budget_exists';
  constructor(readonly budgetId: string) {
    super(`A budget with id "${budgetId}" exists; read it with GET /budgets/${budgetId}`);
  }

  override wireDetails(): Record<string, unknown> {
    return { budgetId: this.budgetId };
  }
}

/** The store holds `maxBudgets` definitions already (`409` until the operator raises the limit). */
export class BudgetLimitReachedError extends DurableBudgetError {
  readonly code = 'budget_limit_reached';
  constructor(readonly limit: number) {
    super(`This daemon keeps at most ${limit} budgets (--max-budgets)`);
  }

  override wireDetails(): Record<string, unknown> {
    return { limit: this.limit };
  }
}

/**
 * A gateway call named a budget (`X-Sluice-Budget`) other than the one of the turn it is made
 * for (`409`). A turn's calls are charged to the turn's budget; an agent cannot move them.
 */
export class BudgetConflictError extends DurableBudgetError {
  readonly code = 'budget_conflict';
  constructor(
    named: string,
    readonly turnBudget: string,
  ) {
    super(`This call belongs to a turn charged to budget "${turnBudget}"; X-Sluice-Budget names "${named}"`);
  }

  override wireDetails(): Record<string, unknown> {
    return { budgetId: this.turnBudget };
  }
}

/**
 * A session credential's call named a budget (`X-Sluice-Budget`) not attached to its session
 * (`403`): a session's calls may charge only budgets a prompt of that session was run with;
 * only the daemon token names any budget (docs/decisions/033).
 */
export class BudgetForbiddenError extends DurableBudgetError {
  readonly code = 'budget_forbidden';
  constructor(readonly budgetId: string) {
    super(
      `A session credential may charge only budgets its own session's prompts were sent with ` +
        `(budgetId); budget "${budgetId}" is not one. Send the prompt with that budgetId, or ` +
        `call with the daemon token`,
    );
  }

  override wireDetails(): Record<string, unknown> {
    return { budgetId: this.budgetId };
  }
}

/** The journal has no read side, so a durable budget's spend cannot be recovered (`501`). */
export class JournalNotReadableError extends DurableBudgetError {
  readonly code = 'journal_not_readable';
  constructor() {
    super('This daemon journal cannot be read back, so budgets cannot be recovered');
  }
}
