import type { TaskBudgetLimits } from '@sluice/runtime';
import type { Sql } from 'postgres';

/** A durable budget's definition, as the daemon's budget store port holds it. */
export interface StoredBudget {
  readonly budgetId: string;
  readonly limits: Readonly<TaskBudgetLimits>;
  /** Wall-clock epoch ms of creation. */
  readonly createdAt: number;
}

/** Serialises creates across the fleet, so that the count bound holds. */
const BUDGET_CREATE_LOCK = 0x51_75_1c_e1;

/**
 * Durable budgets' definitions in the fleet's PostgreSQL database (table `sluice_budgets`), next
 * to the journal that holds their spend: every daemon of the fleet opens the same budgets. It
 * implements the daemon's `BudgetStore` port structurally (this package does not import the
 * daemon).
 */
export class PostgresBudgetStore {
  constructor(private readonly sql: Sql) {}

  /**
   * Stores `definition` unless its id is taken (`exists`) or `maxBudgets` are stored (`full`),
   * in one transaction under an advisory lock: two creates of one id never both succeed, and
   * concurrent creates on several daemons never pass the bound.
   */
  async insert(definition: StoredBudget, maxBudgets: number): Promise<'created' | 'exists' | 'full'> {
    return this.sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${BUDGET_CREATE_LOCK})`;
      const [taken] = await tx`SELECT 1 FROM sluice_budgets WHERE budget_id = ${definition.budgetId}`;
      if (taken !== undefined) return 'exists' as const;
      const [{ count } = { count: 0 }] = await tx<{ count: number }[]>`
        SELECT count(*)::int AS count FROM sluice_budgets`;
      if (count >= maxBudgets) return 'full' as const;
      await tx`INSERT INTO sluice_budgets (budget_id, limits, created_at)
               VALUES (${definition.budgetId}, ${JSON.stringify(definition.limits)}, ${definition.createdAt})`;
      return 'created' as const;
    });
  }

  /** The definition of `budgetId`, or undefined. */
  async get(budgetId: string): Promise<StoredBudget | undefined> {
    const [row] = await this.sql<{ budget_id: string; limits: string; created_at: string }[]>`
      SELECT budget_id, limits, created_at FROM sluice_budgets WHERE budget_id = ${budgetId}`;
    if (row === undefined) return undefined;
    return {
      budgetId: row.budget_id,
      limits: JSON.parse(row.limits) as TaskBudgetLimits,
      createdAt: Number(row.created_at),
    };
  }
}
