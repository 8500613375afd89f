import type Database from 'better-sqlite3';
import { openSqlite, type TaskBudgetLimits } from '@sluice/runtime';
import type { BudgetDefinition, BudgetInsert, BudgetStore } from '../budgets/index.js';
import { NEWER_DATA_DIR_ADVICE, type Migration } from '@sluice/store';
import { migrateComponent } from './sqlite-component-schema.js';

/** The row of `sluice_schema_migrations` that belongs to the budget store. */
export const BUDGET_STORE_COMPONENT = 'daemon.budgets';

/** The budget store's migrations, oldest first; released entries never change. */
const MIGRATIONS: readonly Migration[] = [
  {
    // One row per durable budget: its limits as JSON. Its spend is in the journal (task id =
    // budget id), so nothing here changes once written.
    version: 1,
    sql: `
      CREATE TABLE sluice_budgets (
        budget_id TEXT NOT NULL PRIMARY KEY,
        limits TEXT NOT NULL,
        created_at INTEGER NOT NULL
      ) WITHOUT ROWID;
    `,
  },
];

/** The budget table's schema in the shared file; a newer one refuses to open. */
const BUDGET_SCHEMA = {
  component: BUDGET_STORE_COMPONENT,
  migrations: MIGRATIONS,
  tooNew: (path: string, found: number, known: number) =>
    new Error(
      `Budget store "${path}" has schema version ${found}, newer than the ${known} this build knows: ${NEWER_DATA_DIR_ADVICE}`,
    ),
};

interface Row {
  budget_id: string;
  limits: string;
  created_at: number;
}

/**
 * Durable budgets' definitions in the data directory's SQLite file, next to the journal that
 * holds their spend: one small table, its schema version kept as component `daemon.budgets` in
 * the file's shared `sluice_schema_migrations`. Its own connection; every statement is short.
 */
export class SqliteBudgetStore implements BudgetStore {
  private readonly db: Database.Database;
  private readonly insertIfRoom: (definition: BudgetDefinition, maxBudgets: number) => BudgetInsert;
  private readonly select: Database.Statement<[string], Row>;

  /** Opens the file (created when missing, WAL) and migrates the budget table. */
  constructor(
    readonly path: string,
    busyTimeoutMs = 5000,
  ) {
    this.db = openSqlite(path, busyTimeoutMs);
    try {
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('secure_delete = ON'); // as every connection to the file: see the journal's
      migrateComponent(this.db, BUDGET_SCHEMA);
      const exists = this.db
        .prepare<[string], number>('SELECT 1 FROM sluice_budgets WHERE budget_id = ?')
        .pluck();
      const count = this.db.prepare<[], number>('SELECT count(*) FROM sluice_budgets').pluck();
      const insert = this.db.prepare<[string, string, number]>(
        'INSERT INTO sluice_budgets (budget_id, limits, created_at) VALUES (?, ?, ?)',
      );
      this.select = this.db.prepare<[string], Row>('SELECT * FROM sluice_budgets WHERE budget_id = ?');
      this.insertIfRoom = this.db.transaction((definition: BudgetDefinition, maxBudgets: number) => {
        if (exists.get(definition.budgetId) !== undefined) return 'exists';
        if ((count.get() ?? 0) >= maxBudgets) return 'full';
        insert.run(definition.budgetId, JSON.stringify(definition.limits), definition.createdAt);
        return 'created';
      }).immediate;
    } catch (error) {
      this.db.close();
      throw error;
    }
  }

  async insert(definition: BudgetDefinition, maxBudgets: number): Promise<BudgetInsert> {
    return this.insertIfRoom(definition, maxBudgets);
  }

  async get(budgetId: string): Promise<BudgetDefinition | undefined> {
    const row = this.select.get(budgetId);
    if (row === undefined) return undefined;
    return {
      budgetId: row.budget_id,
      limits: JSON.parse(row.limits) as TaskBudgetLimits,
      createdAt: row.created_at,
    };
  }

  close(): void {
    this.db.close();
  }
}
