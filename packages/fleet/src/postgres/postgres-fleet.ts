import type { MigrationOutcome } from '@sluice/store';
import postgres, { type Sql } from 'postgres';
import { StoreUnreachableError } from './errors.js';
import {
  resolveFleetOptions,
  type PostgresFleetOptions,
  type PostgresFleetSettings,
} from './fleet-options.js';
import { migrateStore } from './migrations.js';
import { NodeLease } from './node-lease.js';
import { PostgresBudgetStore } from './postgres-budget-store.js';
import { PostgresJournal } from './postgres-journal.js';
import { PostgresSessionStore } from './postgres-session-store.js';
import { PurgeVacuum } from './purge-vacuum.js';
import { settleDeadNodes, type SettledNodes } from './reconcile.js';
import { SessionOwnership } from './session-ownership.js';

/** A daemon's journal and session store on a shared PostgreSQL database, and its node lease. */
export interface PostgresFleet {
  readonly nodeId: string;
  readonly journal: PostgresJournal;
  readonly store: PostgresSessionStore;
  /** Durable budgets' definitions, shared by the fleet. */
  readonly budgets: PostgresBudgetStore;
  /** What opening did to the schema. */
  readonly migration: MigrationOutcome;
  /** Renews the lease and settles the nodes found dead now (the timer does it every third of the lease). */
  readonly lease: NodeLease;
  /**
   * Settles every node whose lease expired: their calls without a result get an `interrupted`
   * one (never re-run), their sessions become free to load elsewhere.
   */
  settleDeadNodes(): Promise<SettledNodes>;
  /** {@link settleDeadNodes} in the daemon's terms (`Daemon.recover`). */
  recover(): Promise<{ interruptedCalls: number }>;
  /**
   * Drains the journal, closes the store, ends the lease — removing this node's row, which frees
   * its sessions, when every call it recorded has its result — and closes the pool.
   */
  close(): Promise<void>;
}

/**
 * Connects, migrates (refusing a schema newer than this build), registers this node and returns
 * its journal and session store. Rejects with `RangeError` naming a bad option,
 * `StoreUnreachableError` when the database cannot be reached and `StoreSchemaTooNewError`.
 */
export async function openPostgresFleet(options: PostgresFleetOptions): Promise<PostgresFleet> {
  const settings = resolveFleetOptions(options);
  const sql = await connect(settings);
  try {
    const migration = await migrateStore(sql, settings.store);
    return await startNode(sql, settings, migration);
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw error;
  }
}

async function startNode(
  sql: Sql,
  settings: PostgresFleetSettings,
  migration: MigrationOutcome,
): Promise<PostgresFleet> {
  const { nodeId, wallNow, store } = settings;
  const settle = (): Promise<SettledNodes> => settleDeadNodes(sql, nodeId, wallNow());
  const lease: NodeLease = new NodeLease({
    sql,
    store,
    nodeId,
    advertiseUrl: settings.advertiseUrl,
    leaseMs: settings.leaseMs,
    wallNow,
    clock: settings.clock,
    afterRenewal: settle,
    onLost: settings.onLeaseLost,
    reportError: settings.reportError,
  });
  const loseLease = () => lease.loseLease();
  const journal = new PostgresJournal({
    sql,
    store,
    nodeId,
    maxBatchRecords: settings.maxBatchRecords,
    maxBatchesInFlight: settings.maxBatchesInFlight,
    confirmSliceRecords: settings.confirmSliceRecords,
    reportError: settings.reportError,
    leaseLost: () => lease.lost,
    loseLease,
  });
  const sessions = new PostgresSessionStore({
    sql,
    store,
    ownership: new SessionOwnership(nodeId, wallNow),
    loseLease,
    maxSessions: settings.maxSessions,
    maxConversationMessages: settings.maxConversationMessages,
    maxConversationBytes: settings.maxConversationBytes,
    maxCacheBytes: settings.maxCacheBytes,
    vacuum: new PurgeVacuum(sql, settings.purgeVacuum),
  });
  await lease.start();
  let closing: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    try {
      const settled = await journal.drain();
      await sessions.close();
      await lease.stop(settled);
    } finally {
      await sql.end({ timeout: 5 });
    }
  };
  return {
    nodeId,
    journal,
    store: sessions,
    budgets: new PostgresBudgetStore(sql),
    migration,
    lease,
    settleDeadNodes: settle,
    recover: async () => ({ interruptedCalls: (await settle()).interruptedCalls }),
    close: () => (closing ??= close()),
  };
}

/** The pool, checked with one query; the schema created when one is named. */
async function connect(settings: PostgresFleetSettings): Promise<Sql> {
  const sql = postgres(settings.url, {
    max: settings.maxConnections,
    connect_timeout: Math.max(1, Math.ceil(settings.connectTimeoutMs / 1000)),
    onnotice: () => {},
    ...(settings.schema === undefined ? {} : { connection: { search_path: settings.schema } }),
  });
  try {
    if (settings.schema !== undefined) await sql`CREATE SCHEMA IF NOT EXISTS ${sql(settings.schema)}`;
    else await sql`SELECT 1`;
    return sql;
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw new StoreUnreachableError(settings.store, (error as Error).message, { cause: error });
  }
}
