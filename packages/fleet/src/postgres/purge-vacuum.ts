import type { Sql } from 'postgres';

import type { PurgeVacuumMode } from '@sluice/store';

export { PURGE_VACUUM_MODES, type PurgeVacuumMode } from '@sluice/store';

/** The tables that hold a session's text: its messages, its model calls' bodies, its name. */
export const PURGED_TABLES = [
  'sluice_session_messages',
  'sluice_journal_records',
  'sluice_sessions',
] as const;

const STATEMENT: Record<PurgeVacuumMode, string> = {
  plain: `VACUUM ${PURGED_TABLES.join(', ')}`,
  full: `VACUUM (FULL) ${PURGED_TABLES.join(', ')}`,
};

/** The tables of {@link PURGED_TABLES} this role may not vacuum (neither their owner nor the database's). */
const NOT_VACUUMABLE = `SELECT c.relname FROM pg_class c
  WHERE c.oid = ANY (ARRAY[${PURGED_TABLES.map((table) => `to_regclass('${table}')`).join(', ')}])
    AND NOT pg_has_role(c.relowner, 'USAGE')
    AND NOT pg_has_role((SELECT datdba FROM pg_database WHERE datname = current_database()), 'USAGE')
  ORDER BY c.relname`;

/**
 * Vacuums the purged tables after a purge's delete committed, so that no row version, live or
 * dead, still holds the purged text (docs/decisions/036). `VACUUM` cannot run in a transaction
 * and one run covers every purge committed before it starts, so runs are coalesced: a purge
 * waits for the next run to start after its delete, sharing it with every purge that asked
 * meanwhile — at most one run in progress and one waiting, however many purges arrive.
 */
export class PurgeVacuum {
  private running: Promise<void> | undefined;
  private waiting: Promise<void> | undefined;

  /** `mode` is validated by `resolveFleetOptions`. */
  constructor(
    private readonly sql: Sql,
    readonly mode: PurgeVacuumMode,
  ) {}

  /**
   * Resolves once a vacuum that started after this call has finished on every purged table;
   * rejects when it failed or this role may not vacuum them (a vacuum the server would skip
   * with a mere warning).
   */
  afterDelete(): Promise<void> {
    if (this.waiting !== undefined) return this.waiting;
    if (this.running === undefined) return this.start();
    const waiting = this.running.then(
      () => this.start(),
      () => this.start(),
    );
    this.waiting = waiting;
    return waiting;
  }

  private start(): Promise<void> {
    this.waiting = undefined;
    const run = this.run().finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
    return run;
  }

  private async run(): Promise<void> {
    const refused = await this.sql.unsafe<{ relname: string }[]>(NOT_VACUUMABLE);
    if (refused.length > 0)
      throw new Error(
        `the store's role may not VACUUM ${refused.map((row) => row.relname).join(', ')} (it owns neither ` +
          'them nor the database): the purged rows are deleted, but their text stays in dead row ' +
          'versions until autovacuum removes them; run the daemon as the tables’ owner',
      );
    await this.sql.unsafe(STATEMENT[this.mode]);
  }
}
