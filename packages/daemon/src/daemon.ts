import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  systemClock,
  type CapacityPort,
  type ModelCatalogue,
  type ModelRuntime,
  type Job,
  type Journal,
  type ModelProvider,
  type PruneBatch,
  type SchedulerObserver,
  type Clock,
} from '@sluice/runtime';
import { AcpAgentPool, ChatAgent, type AgentLog, type ChatAgentOptions } from './agents/index.js';
import { ModelTableError, buildCatalogue, createProviders, modelSpecs } from './models/index.js';
import { withoutSecrets } from './settings/index.js';
import { DurableBudgets, MemoryBudgetStore, type BudgetStore } from './budgets/index.js';
import {
  DaemonConfigError,
  resolveDaemonConfig,
  type DaemonConfig,
  type ResolvedDaemonConfig,
} from './config.js';
import { SessionCredentials } from './gateway/index.js';
import { PermissionBroker, withPermissions } from './permissions/index.js';
import { SessionBridge, type Agent, type SessionStore, type TurnFailure } from './sessions/index.js';
import { JournalRetention, LazySqlitePersistence, lockDataDir, prepareDataDir } from './persistence/index.js';
import type { DaemonTap } from './observe/index.js';

/** Things a test or host may inject instead of what the config builds. */
export interface DaemonParts {
  journal?: Journal;
  /** The provider of a one-model catalogue (the flag form). */
  provider?: ModelProvider;
  /** Each model's provider, in catalogue order (`models`), instead of building them. */
  providers?: readonly ModelProvider[];
  agent?: Agent;
  store?: SessionStore;
  onError?: (error: unknown, context: string) => void;
  /** Told about every prompt that ended `turn_error`: ids and codes, never text. */
  onTurnError?: (failure: TurnFailure) => void;
  /** The per-session gateway credentials; one is made when absent. */
  credentials?: SessionCredentials;
  /** The model gateway's base URL (`http://host:port/v1`) once the server listens, for agent processes. */
  gatewayUrl?: () => string | undefined;
  /** Where external agents' stderr and process events go. */
  agentLog?: AgentLog;
  /** The external agents' pool's clock (idle, liveness and spare timers); the system's when absent. */
  agentClock?: Clock;
  /** Told of every model call's admission, refusal, slot and end (SCH-11). */
  schedulerObserver?: SchedulerObserver;
  /** Told after a journal retention pass deleted calls (`journalRetentionDays`). */
  onJournalPruned?: (report: { deletedCalls: number; cutoff: string }) => void;
  /** The counters `/metrics` and `/dashboard` read; without one the daemon counts nothing. */
  tap?: DaemonTap;
  /**
   * A journal and session store shared with other daemons (the CLI's `--store postgres://…`),
   * used instead of the data directory's SQLite file; the daemon recovers and closes it.
   */
  storage?: DaemonStorage;
  /** Model limits shared with a fleet (`--fleet-redis`); the runtime owns and closes it. Absent: per daemon. */
  capacity?: CapacityPort<Job>;
}

/** The journal and session store of a daemon, and how it settles and lets go of them. */
export interface DaemonStorage {
  journal: Journal;
  store: SessionStore;
  /** Durable budgets' definitions, shared by the fleet like the journal that holds their spend. */
  budgets: BudgetStore;
  /** Settles what dead daemons left: each model call without a result gets an `interrupted` one. */
  recover(): Promise<RecoveryReport>;
  /** Closes the journal (flushing it) and the store. */
  close(): Promise<void>;
}

/** The composed daemon: runtime, sessions (with their event streams), permissions and the agent. */
export interface Daemon {
  readonly config: ResolvedDaemonConfig;
  /** The default model's runtime (the built-in agent's); {@link models} holds every model's. */
  readonly runtime: ModelRuntime;
  /** The model catalogue (issue 29): each model its own runtime and limits, one journal. */
  readonly models: ModelCatalogue;
  readonly bridge: SessionBridge;
  /** Permission requests of running turns and their votes (PROTOCOL §7). */
  readonly permissions: PermissionBroker;
  /** The external agents' process pool, when `agents` are configured. */
  readonly agentPool: AcpAgentPool | undefined;
  readonly journal: Journal;
  /**
   * The one set of per-session credentials of the model gateway (`/v1/*`): an external agent
   * issues one per session and the gateway attributes calls by it (docs/decisions/014).
   */
  readonly credentials: SessionCredentials;
  /** Durable task budgets (issue 21): `POST /budgets`, a prompt's `budgetId`, `X-Sluice-Budget`. */
  readonly budgets: DurableBudgets;
  /** True once `close()` was called: no new sessions or prompts are admitted. */
  readonly draining: boolean;
  /** The operators' counters (`/metrics`, `/dashboard`), when the daemon keeps them. */
  readonly tap?: DaemonTap | undefined;
  /**
   * Opens the stored files and settles what a killed daemon left behind: each model call it
   * left without a result gets an `interrupted` one. Serving does not wait for it.
   */
  recover(): Promise<RecoveryReport>;
  /** Stops admitting, lets pending prompts finish (up to `drainTimeoutMs`), then cancels the rest and shuts down. */
  close(): Promise<void>;
}

/** What {@link Daemon.recover} found. */
export interface RecoveryReport {
  /** Model calls a killed daemon left without a result, now recorded as `interrupted`. */
  interruptedCalls: number;
}

/** The journal and session store the daemon uses, and how it lets go of them. */
interface Storage {
  journal: Journal;
  store: SessionStore | undefined;
  /** Durable budgets' definitions: in the SQLite file, or in memory beside an injected journal. */
  budgets: BudgetStore;
  /** Opens the files now and settles what a killed daemon left. */
  recover(): Promise<RecoveryReport>;
  /** Closes what the daemon opened itself (an injected journal is closed too). */
  close(): Promise<void>;
  /** Releases the data directory; safe to call more than once. */
  unlock(): void;
  /** One retention batch of the SQLite journal; absent for an injected journal. */
  prune?: (cutoffMs: number, afterSeq: number, maxRows: number) => Promise<PruneBatch>;
}

/**
 * The injected journal, or the SQLite file in the data directory, which also holds the
 * sessions: the directory is checked and claimed now, the file opened on first use
 * (docs/decisions/011).
 */
function openStorage(config: ResolvedDaemonConfig, parts: DaemonParts): Storage {
  const shared = parts.storage;
  if (shared !== undefined)
    return {
      journal: shared.journal,
      store: shared.store,
      budgets: shared.budgets,
      recover: () => shared.recover(),
      close: () => shared.close(),
      unlock: () => {},
    };
  const journal = parts.journal;
  if (journal !== undefined)
    return {
      journal,
      store: parts.store,
      budgets: new MemoryBudgetStore(),
      recover: () => Promise.resolve({ interruptedCalls: 0 }),
      close: () => journal.close(),
      unlock: () => {},
    };
  const dataDir = resolve(config.dataDir);
  const path = prepareDataDir(dataDir);
  const unlock = lockDataDir(dataDir);
  const persistence = new LazySqlitePersistence(
    path,
    parts.store === undefined,
    parts.tap?.journal.batchCommitted,
  );
  return {
    journal: persistence.journal,
    store: parts.store ?? persistence.store,
    budgets: persistence.budgets,
    recover: () => persistence.recover(),
    close: () => persistence.close(),
    unlock,
    prune: (cutoffMs, afterSeq, maxRows) => persistence.pruneJournal(cutoffMs, afterSeq, maxRows),
  };
}

/** The catalogue's models over the one journal; a bad catalogue lets go of the storage and names itself. */
function buildModels(
  config: ResolvedDaemonConfig,
  parts: DaemonParts,
  storage: Storage,
  observerOf: (name: string) => SchedulerObserver | undefined,
): ModelCatalogue {
  try {
    const specs = modelSpecs(config);
    const given = parts.providers ?? (parts.provider === undefined ? undefined : [parts.provider]);
    return buildCatalogue(specs, createProviders(specs, given), {
      journal: storage.journal,
      observerOf,
      ...(parts.capacity === undefined ? {} : { capacity: parts.capacity }),
      maxConcurrencyTotal: config.modelMaxConcurrencyTotal,
    });
  } catch (error) {
    void storage.close().catch(() => {});
    storage.unlock();
    if (error instanceof ModelTableError) throw new DaemonConfigError('models', error.message);
    throw error;
  }
}

/** Builds a daemon from its configuration (validated here, naming any bad value). */
export function createDaemon(config: DaemonConfig = {}, parts: DaemonParts = {}): Daemon {
  const resolved = resolveDaemonConfig(config);
  requireDirectory(resolved.workspace);
  const storage = openStorage(resolved, parts);
  const tap = parts.tap;
  const observer = schedulerObservers(parts.schedulerObserver, tap?.model);
  // Each model's scheduler tells the shared observer and counts its own refusals.
  const observerOf = (name: string): SchedulerObserver | undefined =>
    tap === undefined ? observer : schedulerObservers(observer, tap.model.ofModel(name));
  const models = buildModels(resolved, parts, storage, observerOf);
  // The default model's runtime: the built-in agent's, the budgets' clock and pricing.
  const runtime = models.defaultModel.runtime;
  const retention = buildRetention(resolved, storage, parts);
  // The broker publishes through the bridge, which drops events of sessions that are gone.
  const permissions = new PermissionBroker({
    responseTimeoutMs: resolved.permissionResponseTimeoutMs,
    events: { publish: (sessionId, event) => bridge.publish(sessionId, event) },
  });
  const credentials = parts.credentials ?? new SessionCredentials();
  const budgets = new DurableBudgets({
    runtime,
    journal: storage.journal,
    store: storage.budgets,
    maxBudgets: resolved.maxBudgets,
  });
  const agentPool =
    parts.agent === undefined ? buildAgentPool(resolved, parts, credentials, models) : undefined;
  const agent = withPermissions(
    parts.agent ?? agentPool ?? new ChatAgent({ runtime, models, budgets, ...chatAgentConfig(resolved) }),
    permissions,
  );
  const bridge: SessionBridge = buildBridge(resolved, agent, storage.store, parts, models);

  let closing: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    bridge.beginDrain();
    try {
      await waitUntilIdle(bridge, resolved.drainTimeoutMs);
      await bridge.shutdown('daemon_shutdown');
      await agentPool?.close();
      bridge.streams.closeAll('daemon_shutdown');
      await models.shutdown({ abortRunning: true });
      await retention?.stop();
      await storage.close();
    } finally {
      // Whatever failed on the way, this daemon is done with the directory.
      storage.unlock();
    }
  };
  return {
    config: resolved,
    runtime,
    models,
    bridge,
    permissions,
    credentials,
    budgets,
    agentPool,
    journal: storage.journal,
    get draining() {
      return bridge.draining;
    },
    tap,
    // Retention's first pass runs once the file is open and settled, then hourly.
    recover: async () => {
      const report = await storage.recover();
      tap?.journal.recovered(report.interruptedCalls);
      retention?.start();
      return report;
    },
    close: () => (closing ??= close()),
  };
}

/** The external agents' pool when the config names agents (`--agent`). */
function buildAgentPool(
  config: ResolvedDaemonConfig,
  parts: DaemonParts,
  credentials: SessionCredentials,
  models: ModelCatalogue,
): AcpAgentPool | undefined {
  if (config.agents === undefined) return undefined;
  return new AcpAgentPool({
    agents: config.agents,
    sessionsPerProcess: config.agentSessionsPerProcess,
    spareSessions: config.agentSpareSessions,
    maxProcesses: config.agentMaxProcesses,
    idleTimeoutMs: config.agentIdleTimeoutMs,
    livenessTimeoutMs: config.agentLivenessTimeoutMs,
    startTimeoutMs: config.agentStartTimeoutMs,
    turnIdleTimeoutMs: config.agentTurnIdleTimeoutMs,
    // A model call of the session's turn is activity: its idle bound waits for the call.
    modelCallRunning: (sessionId) =>
      models.models.some((model) =>
        model.runtime.schedulerSnapshot().jobs.some((job) => job.sessionId === sessionId),
      ),
    ...(config.agentMemoryBudgetMb === undefined ? {} : { memoryBudgetMb: config.agentMemoryBudgetMb }),
    workspace: config.workspace,
    // The daemon's own credentials (its token, fleet URLs) are not the agents' to read.
    env: withoutSecrets(process.env),
    credentials,
    gatewayModel: models.defaultModel.name,
    ...(parts.gatewayUrl === undefined ? {} : { gatewayUrl: parts.gatewayUrl }),
    ...(parts.agentLog === undefined ? {} : { log: parts.agentLog }),
    ...(parts.agentClock === undefined ? {} : { clock: parts.agentClock }),
  });
}

/** Resolves once no prompt is pending, or after `timeoutMs`. */
async function waitUntilIdle(bridge: SessionBridge, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (bridge.pendingPromptTotal > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(25, Math.max(1, deadline - Date.now()))));
  }
}

/** A workspace that is missing or not a directory would refuse every session: refuse to start. */
function requireDirectory(workspace: string): void {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(workspace).isDirectory();
  } catch {
    throw new DaemonConfigError('workspace', `workspace: no such directory ${JSON.stringify(workspace)}`);
  }
  if (!isDirectory)
    throw new DaemonConfigError('workspace', `workspace: ${JSON.stringify(workspace)} is not a directory`);
}

/** One observer telling both `first` and `second` (a host's and the metrics tap's), or the one given. */
function schedulerObservers(
  first: SchedulerObserver | undefined,
  second: SchedulerObserver | undefined,
): SchedulerObserver | undefined {
  if (first === undefined || second === undefined) return first ?? second;
  const both: SchedulerObserver = {};
  for (const hook of ['admitted', 'rejected', 'slotGranted', 'slotReleased', 'finished'] as const) {
    const a = first[hook] as ((...args: unknown[]) => void) | undefined;
    const b = second[hook] as ((...args: unknown[]) => void) | undefined;
    if (a !== undefined || b !== undefined)
      (both as Record<string, unknown>)[hook] = (...args: unknown[]): void => {
        a?.apply(first, args);
        b?.apply(second, args);
      };
  }
  return both;
}

/** The sessions layer over `agent`, with the configured limits (and the metrics' tap). */
/** The built-in chat agent's settings from the configuration. */
function chatAgentConfig(
  resolved: ResolvedDaemonConfig,
): Pick<ChatAgentOptions, 'model' | 'contextMaxBytes'> {
  return { model: resolved.model, contextMaxBytes: resolved.contextMaxBytes };
}

function buildBridge(
  resolved: ResolvedDaemonConfig,
  agent: Agent,
  store: SessionStore | undefined,
  parts: DaemonParts,
  models: ModelCatalogue,
): SessionBridge {
  return new SessionBridge({
    agent,
    store,
    models: { resolve: (name) => models.get(name).name },
    workspaces: [resolved.workspace],
    eventRingSize: resolved.eventRingSize,
    ...(resolved.eventRingBytes === undefined ? {} : { eventRingBytes: resolved.eventRingBytes }),
    ...(resolved.eventMemoryBytes === undefined ? {} : { eventMemoryBytes: resolved.eventMemoryBytes }),
    maxPendingPromptsPerSession: resolved.maxPendingPromptsPerSession,
    promptDeadlineMs: resolved.promptDeadlineMs,
    maxSessions: resolved.maxSessions,
    maxSessionsPerWorkspace: resolved.maxSessionsPerWorkspace,
    terminalEventDelayMs: resolved.terminalEventDelayMs,
    sessionIdleTimeoutMs: resolved.sessionIdleTimeoutMs,
    onError: parts.onError,
    onTurnError: parts.onTurnError,
    ...(parts.tap === undefined ? {} : { events: parts.tap.prompts, admissions: parts.tap.prompts }),
  });
}

/** Journal retention when `journalRetentionDays` is set (it starts once the file is recovered). */
function buildRetention(resolved: ResolvedDaemonConfig, storage: Storage, parts: DaemonParts) {
  return JournalRetention.of(resolved.journalRetentionDays, {
    clock: systemClock,
    wallNow: Date.now,
    prune: storage.prune,
    onError: parts.onError ?? (() => {}),
    ...(parts.onJournalPruned === undefined ? {} : { onPruned: parts.onJournalPruned }),
  });
}
