import { describeValue } from '@sluice/protocol';
import { isAbsolute, resolve } from 'node:path';
import { MAX_TIMER_MS } from '@sluice/runtime';
import {
  DEFAULT_AGENT_IDLE_TIMEOUT_MS,
  DEFAULT_AGENT_LIVENESS_TIMEOUT_MS,
  DEFAULT_AGENT_MAX_PROCESSES,
  DEFAULT_AGENT_SESSIONS_PER_PROCESS,
  DEFAULT_CONTEXT_MAX_BYTES,
  DEFAULT_DATA_DIR,
  DEFAULT_EVENT_MEMORY_BYTES,
  DEFAULT_EVENT_RING_BYTES,
  DEFAULT_DRAIN_TIMEOUT_MS,
  DEFAULT_ECHO_DELAY_MS,
  DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION,
  DEFAULT_PERMISSION_RESPONSE_TIMEOUT_MS,
  DEFAULT_RING_SIZE,
  DEFAULT_JOURNAL_RETENTION_DAYS,
  DEFAULT_SESSION_IDLE_TIMEOUT_MS,
  DEFAULT_TERMINAL_EVENT_DELAY_MS,
  MAX_JOURNAL_RETENTION_DAYS,
  MAX_RING_SIZE,
  MAX_TERMINAL_EVENT_DELAY_MS,
  DEFAULT_MAX_BUDGETS,
} from './defaults.js';

/**
 * The daemon's configuration as the CLI (or a host) supplies it: every field optional, with the
 * documented defaults. Validated by {@link resolveDaemonConfig}.
 */
export interface DaemonConfig {
  /** Absolute root of the served workspace; default the process's cwd. */
  workspace?: string;
  /** Directory of the SQLite journal; default `.sluice`. */
  dataDir?: string;
  provider?: 'echo' | 'openai';
  /** Model name (required for `openai`). */
  model?: string;
  /** OpenAI-compatible base URL including `/v1`. */
  baseURL?: string;
  /** API key of the OpenAI-compatible endpoint; default env `OPENAI_API_KEY`. */
  apiKey?: string;
  /** Simulated latency of the echo model (ms before its first delta); default 0. */
  echoDelayMs?: number;
  /** Bytes of history the built-in chat agent sends with a turn, newest first; default 512 KiB. */
  contextMaxBytes?: number;
  /** Durable task budgets stored at most (`POST /budgets`); default 10 000. */
  maxBudgets?: number;
  /** Default 5; 0 or Infinity = unlimited (SPEC BP-1/2). */
  maxPendingPromptsPerSession?: number;
  promptDeadlineMs?: number;
  maxSessions?: number;
  maxSessionsPerWorkspace?: number;
  /** Default 8000. */
  eventRingSize?: number;
  /** Bytes one session's replay window may hold; default 16 MiB. */
  eventRingBytes?: number;
  /** Bytes all replay windows may hold together; default 256 MiB. */
  eventMemoryBytes?: number;
  modelMaxConcurrency?: number;
  modelMaxQueued?: number;
  /** Model calls of accepted prompts that may wait for room (docs/decisions/029); default 256. */
  modelMaxWaiting?: number;
  modelMaxInflight?: number;
  modelMaxRequestBytes?: number;
  modelTimeoutMs?: number;
  /** Terminal events wait at least this long after admission (PROTOCOL §5 client race); default 10. */
  terminalEventDelayMs?: number;
  /** An unanswered permission request picks a reject option after this long; `0` = never (PROTOCOL §7); default 300 000. */
  permissionResponseTimeoutMs?: number;
  /** How long `close()` lets pending prompts finish before cancelling them; default 10 000. */
  drainTimeoutMs?: number;
  /**
   * External ACP agents to run sessions on instead of the built-in chat agent (`--agent`); the
   * first is the default, `POST /session {agent}` picks another by name.
   */
  agents?: ReadonlyArray<{ name: string; command: readonly string[] }>;
  /** Sessions one agent process hosts; default 1. */
  agentSessionsPerProcess?: number;
  /** Agent processes at once; default 8. */
  agentMaxProcesses?: number;
  /** An agent process without a running turn is retired after this long; default 300 000. */
  agentIdleTimeoutMs?: number;
  /** An agent process that leaves a liveness probe unanswered this long is killed; default 30 000. */
  agentLivenessTimeoutMs?: number;
  /** A live session nobody uses (no prompt, subscriber or client activity) is closed after this long; default 0 = never. */
  sessionIdleTimeoutMs?: number;
  /** Model calls older than this many days are deleted from the journal; default 0 = kept for ever. */
  journalRetentionDays?: number;
  /**
   * A PostgreSQL database (`postgres://…`) holding the journal and the sessions, shared by a
   * fleet of daemons; absent = the SQLite file in `dataDir` (docs/fleet.md).
   */
  store?: string;
  /** Where clients reach this daemon: told to a client that asks another daemon of the fleet for a session open here. */
  advertiseUrl?: string;
  /** How long this daemon's lease in the shared store lasts unrenewed (it renews every third); default 15 000. */
  storeLeaseMs?: number;
  /** Redis of the fleet whose model limits this daemon shares (`redis://…`); absent: limits are per daemon. */
  fleetRedis?: string;
  /** Namespaces the fleet's keys, so several fleets share one Redis; default `sluice`. */
  fleetName?: string;
  /** While the fleet's Redis is unreachable: this node's share of the limits, or refuse; default `local`. */
  fleetOnOutage?: 'local' | 'refuse';
  /** A daemon that has not renewed its fleet leases for this long is dead; default 3000. */
  fleetLeaseTtlMs?: number;
  /** Model calls per minute per provider/model across the fleet; default none. */
  fleetRequestsPerMinute?: number;
  /** Tokens per minute per provider/model across the fleet; default none. */
  fleetTokensPerMinute?: number;
}

/** The validated configuration, defaults filled in. */
export type ResolvedDaemonConfig = DaemonConfig &
  Required<
    Pick<
      DaemonConfig,
      | 'workspace'
      | 'dataDir'
      | 'provider'
      | 'echoDelayMs'
      | 'contextMaxBytes'
      | 'maxPendingPromptsPerSession'
      | 'eventRingSize'
      | 'terminalEventDelayMs'
      | 'permissionResponseTimeoutMs'
      | 'drainTimeoutMs'
      | 'agentSessionsPerProcess'
      | 'agentMaxProcesses'
      | 'agentIdleTimeoutMs'
      | 'agentLivenessTimeoutMs'
      | 'sessionIdleTimeoutMs'
      | 'journalRetentionDays'
    >
  >;

/** An invalid configuration value; the message names the setting and the value. */
export class DaemonConfigError extends Error {
  readonly code = 'invalid_config';
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(message);
    this.name = 'DaemonConfigError';
  }
}

type Rule =
  | { kind: 'int'; min: 0 | 1; max?: number; default?: number; infinity?: boolean }
  | { kind: 'string'; nonEmpty: boolean; default?: string }
  | { kind: 'enum'; values: readonly string[]; default?: string }
  | { kind: 'httpUrl' }
  | { kind: 'agents' }
  | { kind: 'redisUrl' }
  | { kind: 'pattern'; pattern: RegExp; rule: string };

const count = (min: 0 | 1, extra: { max?: number; default?: number } = {}): Rule => ({
  kind: 'int',
  min,
  ...extra,
});

/**
 * One rule per setting. A table rather than a schema library: the configuration is flat, and
 * loading one costs start-up time and memory on every start (see docs/decisions/009).
 */
const RULES: Record<keyof DaemonConfig, Rule> = {
  workspace: { kind: 'string', nonEmpty: true },
  dataDir: { kind: 'string', nonEmpty: true, default: DEFAULT_DATA_DIR },
  provider: { kind: 'enum', values: ['echo', 'openai'], default: 'echo' },
  model: { kind: 'string', nonEmpty: true },
  baseURL: { kind: 'httpUrl' },
  apiKey: { kind: 'string', nonEmpty: false },
  echoDelayMs: count(0, { max: MAX_TIMER_MS, default: DEFAULT_ECHO_DELAY_MS }),
  contextMaxBytes: count(0, { default: DEFAULT_CONTEXT_MAX_BYTES }),
  maxBudgets: count(1, { default: DEFAULT_MAX_BUDGETS }),
  // SPEC BP-2: `0` or `Infinity` means unlimited (the bridge takes both).
  maxPendingPromptsPerSession: {
    kind: 'int',
    min: 0,
    default: DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION,
    infinity: true,
  },
  promptDeadlineMs: count(1, { max: MAX_TIMER_MS }),
  maxSessions: count(1),
  maxSessionsPerWorkspace: count(1),
  eventRingSize: count(1, { max: MAX_RING_SIZE, default: DEFAULT_RING_SIZE }),
  eventRingBytes: count(1, { default: DEFAULT_EVENT_RING_BYTES }),
  eventMemoryBytes: count(1, { default: DEFAULT_EVENT_MEMORY_BYTES }),
  modelMaxConcurrency: count(1),
  modelMaxQueued: count(0),
  modelMaxWaiting: count(0),
  modelMaxInflight: count(1),
  modelMaxRequestBytes: count(1),
  modelTimeoutMs: count(1, { max: MAX_TIMER_MS }),
  terminalEventDelayMs: count(0, {
    max: MAX_TERMINAL_EVENT_DELAY_MS,
    default: DEFAULT_TERMINAL_EVENT_DELAY_MS,
  }),
  permissionResponseTimeoutMs: count(0, {
    max: MAX_TIMER_MS,
    default: DEFAULT_PERMISSION_RESPONSE_TIMEOUT_MS,
  }),
  drainTimeoutMs: count(0, { max: MAX_TIMER_MS, default: DEFAULT_DRAIN_TIMEOUT_MS }),
  agents: { kind: 'agents' },
  agentSessionsPerProcess: count(1, { default: DEFAULT_AGENT_SESSIONS_PER_PROCESS }),
  agentMaxProcesses: count(1, { default: DEFAULT_AGENT_MAX_PROCESSES }),
  agentIdleTimeoutMs: count(1, { max: MAX_TIMER_MS, default: DEFAULT_AGENT_IDLE_TIMEOUT_MS }),
  agentLivenessTimeoutMs: count(1, { max: MAX_TIMER_MS, default: DEFAULT_AGENT_LIVENESS_TIMEOUT_MS }),
  sessionIdleTimeoutMs: count(0, { max: MAX_TIMER_MS, default: DEFAULT_SESSION_IDLE_TIMEOUT_MS }),
  journalRetentionDays: count(0, {
    max: MAX_JOURNAL_RETENTION_DAYS,
    default: DEFAULT_JOURNAL_RETENTION_DAYS,
  }),
  store: { kind: 'string', nonEmpty: true },
  advertiseUrl: { kind: 'httpUrl' },
  storeLeaseMs: count(1, { max: MAX_TIMER_MS }),
  fleetRedis: { kind: 'redisUrl' },
  fleetName: {
    kind: 'pattern',
    pattern: /^[A-Za-z0-9._-]{1,64}$/,
    rule: 'must be 1-64 letters, digits, ".", "_" or "-"',
  },
  fleetOnOutage: { kind: 'enum', values: ['local', 'refuse'] },
  fleetLeaseTtlMs: count(1, { max: MAX_TIMER_MS }),
  fleetRequestsPerMinute: count(1),
  fleetTokensPerMinute: count(1),
};

const AGENT_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/** Why a list of agents is invalid: not a non-empty list of `{name, command}` with unique names. */
function agentsViolation(value: unknown): string | undefined {
  if (!Array.isArray(value) || value.length === 0) return 'must be a non-empty array of {name, command}';
  const names = new Set<string>();
  for (const agent of value as Array<{ name?: unknown; command?: unknown }>) {
    if (typeof agent?.name !== 'string' || !AGENT_NAME.test(agent.name))
      return `agent names must start with a letter and hold letters, digits, "_", "." or "-"`;
    if (
      !Array.isArray(agent.command) ||
      agent.command.length === 0 ||
      agent.command.some((a) => typeof a !== 'string' || a === '')
    )
      return `agent "${agent.name}" needs a command: a non-empty array of non-empty strings`;
    if (names.has(agent.name)) return `agent name "${agent.name}" is given twice`;
    names.add(agent.name);
  }
  return undefined;
}

/** The reason `value` breaks `rule`, or `undefined` when it is valid. */
function violation(rule: Rule, value: unknown): string | undefined {
  switch (rule.kind) {
    case 'int':
      if (rule.infinity === true && value === Infinity) return undefined;
      if (typeof value !== 'number' || !Number.isInteger(value))
        return `must be ${rule.min === 0 ? 'a non-negative' : 'a positive'} integer`;
      if (value < rule.min) return `must be ${rule.min === 0 ? 'non-negative' : 'positive'}`;
      if (rule.max !== undefined && value > rule.max) return `must be at most ${rule.max}`;
      return undefined;
    case 'string':
      if (typeof value !== 'string') return 'must be a string';
      return rule.nonEmpty && value.length === 0 ? 'must not be empty' : undefined;
    case 'enum':
      return typeof value === 'string' && rule.values.includes(value)
        ? undefined
        : `must be one of ${rule.values.map((v) => `"${v}"`).join(', ')}`;
    case 'agents':
      return agentsViolation(value);
    case 'redisUrl': {
      if (typeof value !== 'string' || !URL.canParse(value)) return 'must be a redis:// URL';
      const { protocol, hostname } = new URL(value);
      if (protocol !== 'redis:' && protocol !== 'rediss:') return 'must be a redis:// or rediss:// URL';
      return hostname === '' ? 'must name a host (e.g. redis://127.0.0.1:6379)' : undefined;
    }
    case 'pattern':
      return typeof value === 'string' && rule.pattern.test(value) ? undefined : rule.rule;
    case 'httpUrl': {
      if (typeof value !== 'string' || !URL.canParse(value)) return 'must be a URL';
      const { protocol } = new URL(value);
      return protocol === 'http:' || protocol === 'https:' ? undefined : 'must be an http(s) URL';
    }
  }
}

/** Validates `config`, fills in the defaults and throws {@link DaemonConfigError} naming a bad value. */
export function resolveDaemonConfig(config: DaemonConfig = {}): ResolvedDaemonConfig {
  if (typeof config !== 'object' || config === null || Array.isArray(config))
    throw new DaemonConfigError('config', `config must be an object, got ${describeValue(config)}`);
  const resolved: Record<string, unknown> = {};
  for (const [setting, value] of Object.entries(config)) {
    const rule = (RULES as Record<string, Rule | undefined>)[setting];
    if (rule === undefined)
      throw new DaemonConfigError(setting, `${setting}: unknown setting (got ${describeValue(value)})`);
    if (value === undefined) continue;
    const reason = violation(rule, value);
    if (reason !== undefined)
      throw new DaemonConfigError(setting, `${setting}: ${reason} (got ${describeValue(value)})`);
    resolved[setting] = value;
  }
  for (const [setting, rule] of Object.entries(RULES))
    if (resolved[setting] === undefined && 'default' in rule && rule.default !== undefined)
      resolved[setting] = rule.default;
  const data = resolved as unknown as Omit<ResolvedDaemonConfig, 'workspace'> & { workspace?: string };

  const workspace = data.workspace ?? process.cwd();
  if (!isAbsolute(workspace))
    throw new DaemonConfigError(
      'workspace',
      `workspace must be an absolute path, got ${JSON.stringify(workspace)}`,
    );
  if (data.provider === 'openai' && data.model === undefined)
    throw new DaemonConfigError('model', 'model is required with provider "openai"');
  const concurrency = data.modelMaxConcurrency ?? 4;
  const inflight = data.modelMaxInflight ?? Math.max(64, concurrency);
  if (inflight < concurrency)
    throw new DaemonConfigError(
      'modelMaxInflight',
      `modelMaxInflight must be at least modelMaxConcurrency (${concurrency}), got ${inflight}`,
    );
  checkStore(data);
  return { ...data, workspace: resolve(workspace) };
}

/** The shared store's settings: a PostgreSQL URL (its password never quoted back), and those that need one. */
function checkStore(data: DaemonConfig): void {
  if (data.store === undefined) {
    for (const setting of ['advertiseUrl', 'storeLeaseMs'] as const)
      if (data[setting] !== undefined)
        throw new DaemonConfigError(
          setting,
          `${setting} needs store (a postgres:// URL shared by the fleet)`,
        );
    return;
  }
  const url = URL.canParse(data.store) ? new URL(data.store) : undefined;
  if (
    url === undefined ||
    (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') ||
    url.pathname.length <= 1
  ) {
    if (url !== undefined && url.password !== '') url.password = '***';
    const shown = url?.toString() ?? describeValue(data.store.replace(/:[^:@/]*@/, ':***@'));
    throw new DaemonConfigError(
      'store',
      `store must be a postgres://user@host:port/database URL, got ${shown}`,
    );
  }
  if ((data.journalRetentionDays ?? 0) > 0)
    throw new DaemonConfigError(
      'journalRetentionDays',
      'journalRetentionDays works on the SQLite journal only; with store, delete old rows of sluice_journal_records in PostgreSQL instead',
    );
  if (data.storeLeaseMs !== undefined && data.storeLeaseMs < 100)
    throw new DaemonConfigError(
      'storeLeaseMs',
      `storeLeaseMs must be at least 100, got ${data.storeLeaseMs}`,
    );
}
