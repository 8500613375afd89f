import type { DaemonConfig } from '../config.js';
import type { DaemonStorage } from '../daemon.js';
import { DEFAULT_STORE_LEASE_MS } from '../defaults.js';
import { DEFAULT_MAX_CONVERSATION_BYTES, DEFAULT_MAX_CONVERSATION_MESSAGES } from '../sessions/index.js';

/** What the CLI hears from a shared store while the daemon runs. */
export interface FleetStorageEvents {
  /** This daemon's lease was lost (another daemon took over its calls and sessions): it must stop. */
  leaseLost(error: Error): void;
  /** A failure no caller hears of (a lease renewal that failed). */
  error(error: unknown): void;
}

/**
 * The journal and session store on the PostgreSQL database of `config.store`, shared with the
 * other daemons of a fleet. `@sluice/fleet` (and its PostgreSQL client) is imported here only,
 * so a single-node daemon never loads it. Connects, migrates and registers this daemon before
 * resolving; rejects when the database is unreachable or was migrated by a newer build.
 */
export async function openFleetStorage(
  config: DaemonConfig & { store: string },
  events: FleetStorageEvents,
): Promise<DaemonStorage> {
  const { openPostgresFleet } = await import('@sluice/fleet');
  const fleet = await openPostgresFleet({
    url: config.store,
    ...(config.advertiseUrl === undefined ? {} : { advertiseUrl: config.advertiseUrl }),
    leaseMs: config.storeLeaseMs ?? DEFAULT_STORE_LEASE_MS,
    ...(config.storePurgeVacuum === undefined ? {} : { purgeVacuum: config.storePurgeVacuum }),
    maxConversationMessages: DEFAULT_MAX_CONVERSATION_MESSAGES,
    maxConversationBytes: DEFAULT_MAX_CONVERSATION_BYTES,
    onLeaseLost: (error) => events.leaseLost(error),
    reportError: (error) => events.error(error),
  });
  return {
    journal: fleet.journal,
    store: fleet.store,
    budgets: fleet.budgets,
    recover: () => fleet.recover(),
    close: () => fleet.close(),
  };
}
