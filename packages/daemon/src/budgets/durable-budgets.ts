import { randomUUID } from 'node:crypto';
import type {
  BudgetReason,
  Journal,
  JournalRecord,
  TaskBudget,
  TaskBudgetLimits,
  TaskUsage,
} from '@sluice/runtime';
import { DEFAULT_MAX_BUDGETS } from '../defaults.js';
import { positiveInteger } from '../validate.js';
import type { BudgetRequest } from './budget-request.js';
import type { BudgetDefinition, BudgetStore } from './budget-store.js';
import {
  BudgetExistsError,
  BudgetLimitReachedError,
  BudgetNotFoundError,
  JournalNotReadableError,
} from './errors.js';

/** Default of {@link DurableBudgetsOptions.maxLiveBudgets}. */
export const DEFAULT_MAX_LIVE_BUDGETS = 1024;

/** What a budget has spent, as `GET /budgets/:id` shows it. */
export interface BudgetSpent {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costMinor: number;
  activityMs: number;
}

/** A durable budget as the API shows it: its limits, what it spent, and whether it refuses calls. */
export interface BudgetState {
  budgetId: string;
  limits: TaskBudgetLimits;
  /** Creation time, ISO 8601. */
  createdAt: string;
  spent: BudgetSpent;
  stoppedReason?: BudgetReason;
}

/** How {@link DurableBudgets} is put together. */
export interface DurableBudgetsOptions {
  /** Makes the budget objects, resumed from the journal's records (the runtime's clock and pricing). */
  runtime: {
    resumeBudget(taskId: string, limits: TaskBudgetLimits, records: readonly JournalRecord[]): TaskBudget;
  };
  /** Where spend is recovered from: `recordsForTask`. */
  journal: Journal;
  store: BudgetStore;
  /** Budgets stored at most; creating more is refused. Default 10 000. */
  maxBudgets?: number;
  /** Budget objects kept in memory at most; the least recently used idle one is dropped. Default 1024. */
  maxLiveBudgets?: number;
  /** Wall clock for `createdAt`, epoch ms. */
  wallNow?: () => number;
}

interface Live {
  readonly definition: BudgetDefinition;
  readonly budget: TaskBudget;
}

/**
 * Durable task budgets (issue 21): definitions in the store, spend in the journal. A budget is
 * opened on first use or read in this process: its spend is recovered from the journal's
 * records of its task (`taskId = budgetId`) — recorded results, plus calls a killed daemon left,
 * at their reserved cost — and from then on this process's calls are counted live on the same
 * object, so nothing is counted twice. Opening is shared by concurrent callers.
 */
export class DurableBudgets {
  readonly maxBudgets: number;
  readonly maxLiveBudgets: number;
  private readonly live = new Map<string, Live>();
  private readonly opening = new Map<string, Promise<Live>>();
  private readonly wallNow: () => number;

  constructor(private readonly options: DurableBudgetsOptions) {
    this.maxBudgets = positiveInteger('maxBudgets', options.maxBudgets ?? DEFAULT_MAX_BUDGETS);
    this.maxLiveBudgets = positiveInteger(
      'maxLiveBudgets',
      options.maxLiveBudgets ?? DEFAULT_MAX_LIVE_BUDGETS,
    );
    this.wallNow = options.wallNow ?? Date.now;
  }

  /** Budget objects held in memory now. */
  get liveCount(): number {
    return this.live.size;
  }

  /** Stores a new budget and answers its state (its spend recovered, normally nothing). */
  async create(request: BudgetRequest): Promise<BudgetState> {
    const definition: BudgetDefinition = {
      budgetId: request.budgetId ?? `budget-${randomUUID()}`,
      limits: request.limits,
      createdAt: this.wallNow(),
    };
    const inserted = await this.options.store.insert(definition, this.maxBudgets);
    if (inserted === 'exists') throw new BudgetExistsError(definition.budgetId);
    if (inserted === 'full') throw new BudgetLimitReachedError(this.maxBudgets);
    return stateOf(await this.openLive(definition.budgetId));
  }

  /** The budget `budgetId`'s object, for model calls; `BudgetNotFoundError` when none is stored. */
  async open(budgetId: string): Promise<TaskBudget> {
    return (await this.openLive(budgetId)).budget;
  }

  /** True when `budgetId` is open in this process (its calls need no store read to start). */
  isOpen(budgetId: string): boolean {
    return this.live.has(budgetId);
  }

  /** What `GET /budgets/:id` answers: limits, spend (recovered plus this process's), stop reason. */
  async state(budgetId: string): Promise<BudgetState> {
    return stateOf(await this.openLive(budgetId));
  }

  private openLive(budgetId: string): Promise<Live> {
    const live = this.live.get(budgetId);
    if (live !== undefined) {
      // Most recently used last: eviction takes the first idle one.
      this.live.delete(budgetId);
      this.live.set(budgetId, live);
      return Promise.resolve(live);
    }
    let opening = this.opening.get(budgetId);
    if (opening === undefined) {
      opening = this.recover(budgetId).finally(() => this.opening.delete(budgetId));
      this.opening.set(budgetId, opening);
    }
    return opening;
  }

  /** Reads the definition and the task's records, and resumes the budget from them. */
  private async recover(budgetId: string): Promise<Live> {
    const definition = await this.options.store.get(budgetId);
    if (definition === undefined) throw new BudgetNotFoundError(budgetId);
    const { journal, runtime } = this.options;
    if (journal.recordsForTask === undefined) throw new JournalNotReadableError();
    const records = await journal.recordsForTask(budgetId);
    const live: Live = { definition, budget: runtime.resumeBudget(budgetId, definition.limits, records) };
    this.live.set(budgetId, live);
    this.evict(budgetId);
    return live;
  }

  /**
   * Drops the least recently used budgets beyond `maxLiveBudgets` that have no call in flight:
   * their spend is all in the journal, so reopening recovers it exactly. Budgets with calls in
   * flight stay (they are bounded by the scheduler's in-flight limit), and so does `opened`,
   * the one being handed out.
   */
  private evict(opened: string): void {
    let excess = this.live.size - this.maxLiveBudgets;
    if (excess <= 0) return;
    for (const [budgetId, live] of this.live) {
      if (!live.budget.idle || budgetId === opened) continue;
      this.live.delete(budgetId);
      if (--excess === 0) return;
    }
  }
}

function stateOf(live: Live): BudgetState {
  const { definition, budget } = live;
  const usage: TaskUsage = budget.usage();
  const state: BudgetState = {
    budgetId: definition.budgetId,
    limits: { ...definition.limits },
    createdAt: new Date(definition.createdAt).toISOString(),
    spent: {
      calls: usage.calls,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      costMinor: usage.costMinor,
      activityMs: usage.activityMs,
    },
  };
  if (usage.stoppedReason !== undefined) state.stoppedReason = usage.stoppedReason;
  return state;
}
