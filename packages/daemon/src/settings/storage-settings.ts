import { MAX_TIMER_MS } from '@sluice/runtime';
import {
  DEFAULT_DATA_DIR,
  DEFAULT_JOURNAL_RETENTION_DAYS,
  DEFAULT_STORE_LEASE_MS,
  MAX_JOURNAL_RETENTION_DAYS,
} from '../defaults.js';
import { int, matching, oneOf, redisUrl, text, httpUrl } from './kinds.js';
import type { SettingTable } from './setting.js';

/** Where the journal and the sessions live, and the fleet that shares them and the model limits. */
export const STORAGE_SETTINGS = {
  dataDir: {
    flag: '--data-dir <dir>',
    topic: 'storage',
    scope: 'daemon',
    kind: text(),
    default: DEFAULT_DATA_DIR,
    help: 'directory of the journal',
  },
  store: {
    flag: '--store <url>',
    topic: 'storage',
    scope: 'daemon',
    kind: text(),
    defaultText: 'SQLite in --data-dir',
    help: 'a PostgreSQL database (postgres://user@host:port/database) holding the journal and sessions, shared by a fleet of daemons',
  },
  advertiseUrl: {
    flag: '--advertise-url <url>',
    topic: 'storage',
    scope: 'daemon',
    kind: httpUrl,
    help: 'where clients reach this daemon, told to a client that asks another daemon of the fleet for a session open here (with --store)',
  },
  storeLeaseMs: {
    flag: '--store-lease-ms <ms>',
    topic: 'storage',
    scope: 'daemon',
    kind: int(1, { max: MAX_TIMER_MS, flagMin: 100 }),
    defaultText: String(DEFAULT_STORE_LEASE_MS),
    help: 'how long this daemon stays owner of its sessions and calls in --store without renewing',
  },
  journalRetentionDays: {
    flag: '--journal-retention-days <days>',
    topic: 'storage',
    scope: 'daemon',
    kind: int(0, { max: MAX_JOURNAL_RETENTION_DAYS }),
    default: DEFAULT_JOURNAL_RETENTION_DAYS,
    help: 'delete model calls older than this from the journal, at start-up and hourly (0 = keep for ever)',
  },
  fleetRedis: {
    flag: '--fleet-redis <url>',
    topic: 'fleet',
    scope: 'daemon',
    kind: redisUrl,
    help: 'share the model limits with every daemon of the fleet through this Redis (redis://host:port)',
  },
  fleetName: {
    flag: '--fleet-name <name>',
    topic: 'fleet',
    scope: 'daemon',
    kind: matching(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1-64 letters, digits, ".", "_" or "-"'),
    defaultText: 'sluice',
    help: 'namespace of the fleet in Redis',
  },
  fleetOnOutage: {
    flag: '--fleet-on-outage <policy>',
    topic: 'fleet',
    scope: 'daemon',
    kind: oneOf(['local', 'refuse']),
    defaultText: 'local',
    help: "while Redis is unreachable: this node's share of the limits, or refuse calls",
  },
  fleetLeaseTtlMs: {
    flag: '--fleet-lease-ttl-ms <ms>',
    topic: 'fleet',
    scope: 'daemon',
    kind: int(1, { max: MAX_TIMER_MS, flagMin: 30 }),
    defaultText: '3000',
    help: 'a daemon that has not renewed its fleet leases for this long is dead and its slots are freed',
  },
  fleetRpm: {
    flag: '--fleet-rpm <n>',
    topic: 'fleet',
    scope: 'daemon',
    config: 'fleetRequestsPerMinute',
    kind: int(1),
    defaultText: 'none',
    help: 'model calls per minute per provider/model across the fleet',
  },
  fleetTpm: {
    flag: '--fleet-tpm <n>',
    topic: 'fleet',
    scope: 'daemon',
    config: 'fleetTokensPerMinute',
    kind: int(1),
    defaultText: 'none',
    help: 'tokens per minute per provider/model across the fleet',
  },
} as const satisfies SettingTable;
