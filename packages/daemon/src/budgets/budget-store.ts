import type { TaskBudgetLimits } from '@sluice/runtime';

/** A durable budget as stored: its id (also its task id in the journal) and its limits. */
export interface BudgetDefinition {
  readonly budgetId: string;
  readonly limits: Readonly<TaskBudgetLimits>;
  /** Wall-clock epoch ms of creation. */
  readonly createdAt: number;
}

/** What {@link BudgetStore.insert} did. */
export type BudgetInsert = 'created' | 'exists' | 'full';

/**
 * Where durable budgets' definitions live; their spend lives in the journal. A fleet shares one
 * store (and one journal) between its daemons, so any node can open any budget.
 */
export interface BudgetStore {
  /**
   * Stores `definition` unless its id is taken (`exists`) or `maxBudgets` are stored (`full`),
   * atomically: two creates of one id never both succeed.
   */
  insert(definition: BudgetDefinition, maxBudgets: number): Promise<BudgetInsert>;
  /** The definition of `budgetId`, or undefined. */
  get(budgetId: string): Promise<BudgetDefinition | undefined>;
}

/** Budget definitions in process memory: for a daemon given a journal of its own (tests, embedding). */
export class MemoryBudgetStore implements BudgetStore {
  private readonly definitions = new Map<string, BudgetDefinition>();

  insert(definition: BudgetDefinition, maxBudgets: number): Promise<BudgetInsert> {
    if (this.definitions.has(definition.budgetId)) return Promise.resolve('exists');
    if (this.definitions.size >= maxBudgets) return Promise.resolve('full');
    this.definitions.set(definition.budgetId, definition);
    return Promise.resolve('created');
  }

  get(budgetId: string): Promise<BudgetDefinition | undefined> {
    return Promise.resolve(this.definitions.get(budgetId));
  }
}
