import { describeValue } from '@sluice/protocol';
import { TEMPORARY_TASK_PREFIX, type TaskBudgetLimits } from '@sluice/runtime';
import { InvalidBudgetError } from './errors.js';

/** Letters, digits and `._:-`, starting with a letter or digit, at most 128 characters. */
/** A budget id: also its task id in the journal (never a temporary task's `tmp-…`). */
export const BUDGET_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

const LIMIT_NAMES: ReadonlyArray<keyof TaskBudgetLimits> = [
  'maxCalls',
  'maxInputTokens',
  'maxOutputTokens',
  'maxCostMinor',
  'maxActivityMs',
];

/** What `POST /budgets` asks for, validated. */
export interface BudgetRequest {
  budgetId: string | undefined;
  limits: TaskBudgetLimits;
}

/**
 * A budget id as a client sends it (`budgetId` of a prompt or `POST /budgets`, the
 * `X-Sluice-Budget` header); `undefined` when absent. `field` names it in the message.
 */
export function parseBudgetId(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !BUDGET_ID.test(value) || value.startsWith(TEMPORARY_TASK_PREFIX))
    throw new InvalidBudgetError(
      `${field} must be 1 to 128 letters, digits, ".", "_", ":" or "-", starting with a letter or ` +
        `digit and not with "${TEMPORARY_TASK_PREFIX}"; got ${describeValue(value)}`,
    );
  return value;
}

/** Validates a `POST /budgets` body: `{budgetId?, limits?}`; each limit a non-negative integer. */
export function parseBudgetRequest(body: Record<string, unknown>): BudgetRequest {
  for (const key of Object.keys(body))
    if (key !== 'budgetId' && key !== 'limits')
      throw new InvalidBudgetError(`${key} is not a field of a budget; send {budgetId?, limits}`);
  const budgetId = parseBudgetId(body['budgetId'], 'budgetId');
  const given = body['limits'] ?? {};
  if (typeof given !== 'object' || given === null || Array.isArray(given))
    throw new InvalidBudgetError(`limits must be an object, got ${describeValue(given)}`);
  const limits: TaskBudgetLimits = {};
  for (const [name, value] of Object.entries(given)) {
    const limit = LIMIT_NAMES.find((known) => known === name);
    if (limit === undefined)
      throw new InvalidBudgetError(`limits.${name} is not a budget limit; use ${LIMIT_NAMES.join(', ')}`);
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
      throw new InvalidBudgetError(
        `limits.${name} must be a non-negative integer, got ${describeValue(value)}`,
      );
    limits[limit] = value;
  }
  return { budgetId, limits };
}
