import { randomUUID } from 'node:crypto';
import { rethrowLater, systemClock, type Clock, type ErrorReporter } from '@sluice/runtime';
import { PURGE_VACUUM_MODES, type PurgeVacuumMode } from './purge-vacuum.js';
import { parseStoreUrl, redactStoreUrl } from './store-url.js';

/** Options of {@link openPostgresFleet}; every value is validated before anything connects. */
export interface PostgresFleetOptions {
  /** `postgres://user@host:port/database` (`--store`); query parameters are passed to the server. */
  url: string;
  /** A schema to keep the tables in, created when missing (tests use one per file). Default: the URL's `search_path`, else `public`. */
  schema?: string;
  /** This daemon's id among the nodes; unique per start. Default a random UUID. */
  nodeId?: string;
  /** Where clients reach this daemon (`--advertise-url`): told to a client that asks another node for a session live here. */
  advertiseUrl?: string;
  /** How long a node's lease lasts unrenewed; it is renewed every third of it. Default 15 000 ms. */
  leaseMs?: number;
  /** Connections of the pool. Default 4. */
  maxConnections?: number;
  /** How long connecting may take before start-up fails. Default 5 s. */
  connectTimeoutMs?: number;
  /** Most journal records in one statement. Default 2048. */
  maxBatchRecords?: number;
  /** Journal statements in flight at once, each on a connection of the pool. Default 4. */
  maxBatchesInFlight?: number;
  /** Appends confirmed per turn of the event loop. Default 64. */
  confirmSliceRecords?: number;
  /** Sessions kept; a new one beyond it evicts the least recently saved. Default 1024; `Infinity` = unlimited. */
  maxSessions?: number;
  /** Messages of history kept per session; use the daemon's value. Default 1000. */
  maxConversationMessages?: number;
  /** UTF-8 bytes of history kept per session; use the daemon's value. Default 4 MiB. */
  maxConversationBytes?: number;
  /** Message text cached of the conversations last saved, so saves need not read them back. Default 16 MiB. */
  maxCacheBytes?: number;
  /** How a purge vacuums the tables it deleted from (`--store-purge-vacuum`). Default `plain`. */
  purgeVacuum?: PurgeVacuumMode;
  /** Wall-clock epoch milliseconds: leases are written and compared in it. Default `Date.now`. */
  wallNow?: () => number;
  /** Schedules lease renewals. Default the system clock. */
  clock?: Clock;
  /** Gets errors that have no caller: a failed renewal, a listener that threw. Default: thrown in a microtask. */
  reportError?: ErrorReporter;
  /** Told once when this node's lease is found lost: the daemon must stop (another node took over). */
  onLeaseLost?: (error: Error) => void;
}

/** {@link PostgresFleetOptions} validated, with their defaults. */
export interface PostgresFleetSettings {
  url: string;
  /** The URL without its password, for messages. */
  store: string;
  schema: string | undefined;
  nodeId: string;
  advertiseUrl: string | undefined;
  leaseMs: number;
  maxConnections: number;
  connectTimeoutMs: number;
  maxBatchRecords: number;
  maxBatchesInFlight: number;
  confirmSliceRecords: number;
  maxSessions: number;
  maxConversationMessages: number;
  maxConversationBytes: number;
  maxCacheBytes: number;
  purgeVacuum: PurgeVacuumMode;
  wallNow: () => number;
  clock: Clock;
  reportError: ErrorReporter;
  onLeaseLost: (error: Error) => void;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Applies the defaults and validates, naming the offending value; throws a `RangeError`. */
export function resolveFleetOptions(options: PostgresFleetOptions): PostgresFleetSettings {
  parseStoreUrl('store', options.url);
  const schema = options.schema;
  if (schema !== undefined && (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)))
    throw new RangeError(`schema must be a lower-case SQL identifier, got ${JSON.stringify(schema)}`);
  const advertiseUrl = options.advertiseUrl;
  if (advertiseUrl !== undefined && !isHttpUrl(advertiseUrl))
    throw new RangeError(`advertiseUrl must be an http(s) URL, got ${JSON.stringify(advertiseUrl)}`);
  const purgeVacuum = options.purgeVacuum ?? 'plain';
  if (!PURGE_VACUUM_MODES.includes(purgeVacuum))
    throw new RangeError(
      `purgeVacuum must be one of ${PURGE_VACUUM_MODES.join(', ')}, got ${JSON.stringify(purgeVacuum)}`,
    );
  const nodeId = options.nodeId ?? randomUUID();
  if (typeof nodeId !== 'string' || nodeId.length === 0 || nodeId.length > 200)
    throw new RangeError(
      `nodeId must be a non-empty string of at most 200 characters, got ${JSON.stringify(nodeId)}`,
    );
  return {
    url: options.url,
    store: redactStoreUrl(options.url),
    schema,
    nodeId,
    advertiseUrl,
    leaseMs: integer('leaseMs', options.leaseMs ?? 15_000, 100),
    maxConnections: integer('maxConnections', options.maxConnections ?? 4, 1),
    connectTimeoutMs: integer('connectTimeoutMs', options.connectTimeoutMs ?? 5_000, 1),
    maxBatchRecords: integer('maxBatchRecords', options.maxBatchRecords ?? 2048, 1),
    maxBatchesInFlight: integer('maxBatchesInFlight', options.maxBatchesInFlight ?? 4, 1),
    confirmSliceRecords: integer('confirmSliceRecords', options.confirmSliceRecords ?? 64, 1),
    maxSessions:
      options.maxSessions === Infinity ? Infinity : integer('maxSessions', options.maxSessions ?? 1024, 1),
    maxConversationMessages: integer('maxConversationMessages', options.maxConversationMessages ?? 1000, 1),
    maxConversationBytes: integer('maxConversationBytes', options.maxConversationBytes ?? 4 * 1024 * 1024, 1),
    maxCacheBytes: integer('maxCacheBytes', options.maxCacheBytes ?? 16 * 1024 * 1024, 0),
    purgeVacuum,
    wallNow: options.wallNow ?? Date.now,
    clock: options.clock ?? systemClock,
    reportError: options.reportError ?? rethrowLater,
    onLeaseLost: options.onLeaseLost ?? (() => {}),
  };
}

function integer(name: string, value: number, min: number): number {
  if (Number.isSafeInteger(value) && value >= min) return value;
  throw new RangeError(`${name} must be an integer of at least ${min}, got ${String(value)}`);
}

function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string' || !URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === 'http:' || protocol === 'https:';
}
