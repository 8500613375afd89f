import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { EchoProvider, ModelRuntime, type Journal, type ModelProvider } from '@sluice/runtime';
import { ChatAgent } from './agents/chat-agent.js';
import {
  DaemonConfigError,
  resolveDaemonConfig,
  type DaemonConfig,
  type ResolvedDaemonConfig,
} from './config.js';
import { EventBus } from './events/index.js';
import type { Agent } from './sessions/agent.js';
import { PermissionBroker, withPermissions } from './permissions/index.js';
import { SessionBridge } from './sessions/session-bridge.js';
import { SESSION_EVENT, type SessionEvent, type SessionEventSink } from './sessions/session-events.js';
import type { SessionStore } from './sessions/session-store.js';
import type { TurnFailure } from './sessions/options.js';
import { prepareDataDir } from './persistence/data-dir.js';
import { lockDataDir } from './persistence/data-dir-lock.js';
import { LazySqlitePersistence } from './persistence/lazy-sqlite-persistence.js';

export {
  DaemonConfigError,
  resolveDaemonConfig,
  type DaemonConfig,
  type ResolvedDaemonConfig,
} from './config.js';

/** Things a test or host may inject instead of what the config builds. */
export interface DaemonParts {
  journal?: Journal;
  provider?: ModelProvider;
  agent?: Agent;
  store?: SessionStore;
  onError?: (error: unknown, context: string) => void;
  /** Told about every prompt that ended `turn_error`: ids and codes, never text. */
  onTurnError?: (failure: TurnFailure) => void;
}

/** How long, and for how many sessions, a closed session's events stay replayable. */
export interface ClosedBusRetention {
  ms: number;
  maxSessions: number;
  now: () => number;
}

/** One minute, 64 sessions: enough to reconnect after a close, bounded in memory. */
export const DEFAULT_CLOSED_BUS_RETENTION: ClosedBusRetention = {
  ms: 60_000,
  maxSessions: 64,
  now: Date.now,
};

/**
 * One event bus per session, fed by the bridge through the {@link SessionEventSink} it
 * sees. A bus is made on first use and closed right after its session's `session_closed`.
 */
export class SessionBuses implements SessionEventSink {
  private readonly buses = new Map<string, EventBus>();
  /** Buses of recently closed sessions, oldest first: their replay outlives the session briefly. */
  private readonly closed = new Map<string, { bus: EventBus; closedAt: number }>();

  constructor(
    private readonly ringSize: number,
    private readonly onSessionClosed: (sessionId: string) => void = () => {},
    private readonly retention: ClosedBusRetention = DEFAULT_CLOSED_BUS_RETENTION,
  ) {}

  /** The session's bus; the caller has checked that the session is live. */
  busFor(sessionId: string): EventBus {
    let bus = this.buses.get(sessionId);
    if (bus === undefined) {
      bus = new EventBus({ ringSize: this.ringSize });
      this.buses.set(sessionId, bus);
      this.closed.delete(sessionId); // a session restored under the same id starts a new epoch
    }
    return bus;
  }

  /**
   * The closed bus of a session that ended within the retention window, if any. A client that
   * reconnects right after a close (its `Last-Event-ID` in hand) still gets the terminal events
   * of its prompts and `session_closed` by replay, then the stream ends — nothing is lost.
   */
  closedBus(sessionId: string): EventBus | undefined {
    this.expireClosed();
    return this.closed.get(sessionId)?.bus;
  }

  get size(): number {
    return this.buses.size;
  }

  /** Whether the session has a bus now (made on first use, dropped after `session_closed`). */
  has(sessionId: string): boolean {
    return this.buses.has(sessionId);
  }

  publish(sessionId: string, event: SessionEvent): void {
    const bus = this.busFor(sessionId);
    bus.publish(event);
    if (event.type === SESSION_EVENT.sessionClosed) {
      bus.close(typeof event.data['reason'] === 'string' ? event.data['reason'] : 'closed');
      this.buses.delete(sessionId);
      this.retainClosed(sessionId, bus);
      this.onSessionClosed(sessionId);
    }
  }

  closeAll(reason: string): void {
    for (const bus of this.buses.values()) bus.close(reason);
    this.buses.clear();
    this.closed.clear();
  }

  private retainClosed(sessionId: string, bus: EventBus): void {
    if (this.retention.maxSessions === 0 || this.retention.ms === 0) return;
    this.closed.set(sessionId, { bus, closedAt: this.retention.now() });
    while (this.closed.size > this.retention.maxSessions) {
      const oldest = this.closed.keys().next();
      if (oldest.done) break;
      this.closed.delete(oldest.value);
    }
  }

  /** Drops buses past the retention window; insertion order is closing order, so it stops early. */
  private expireClosed(): void {
    const cutoff = this.retention.now() - this.retention.ms;
    for (const [sessionId, { closedAt }] of this.closed) {
      if (closedAt > cutoff) break;
      this.closed.delete(sessionId);
    }
  }
}

/** The composed daemon: runtime, sessions, event buses and the built-in agent. */
export interface Daemon {
  readonly config: ResolvedDaemonConfig;
  readonly runtime: ModelRuntime;
  readonly bridge: SessionBridge;
  readonly buses: SessionBuses;
  /** Permission requests of running turns and their votes (PROTOCOL §7). */
  readonly permissions: PermissionBroker;
  readonly journal: Journal;
  /** True once `close()` was called: no new sessions or prompts are admitted. */
  readonly draining: boolean;
  /** Stops admitting, lets pending prompts finish (up to `drainTimeoutMs`), then cancels the rest and shuts down. */
  close(): Promise<void>;
}

/** Builds a daemon from its configuration (validated here, naming any bad value). */
export function createDaemon(config: DaemonConfig = {}, parts: DaemonParts = {}): Daemon {
  const resolved = resolveDaemonConfig(config);
  requireDirectory(resolved.workspace);
  const provider = parts.provider ?? buildProvider(resolved);
  let journal = parts.journal;
  let store = parts.store;
  let persistence: LazySqlitePersistence | undefined;
  let unlockDataDir = (): void => {};
  if (journal === undefined) {
    // Sessions and their conversations live in the same database as the journal. The directory
    // is checked and claimed now; the file is opened on first use (docs/decisions/011).
    const dataDir = resolve(resolved.dataDir);
    const path = prepareDataDir(dataDir);
    unlockDataDir = lockDataDir(dataDir);
    persistence = new LazySqlitePersistence(path, store === undefined);
    journal = persistence.journal;
    store ??= persistence.store;
  }
  const ownedJournal = journal;
  let runtime: ModelRuntime;
  try {
    runtime = new ModelRuntime({
      provider,
      journal: ownedJournal,
      scheduler: {
        maxConcurrency: resolved.modelMaxConcurrency,
        maxQueued: resolved.modelMaxQueued,
        maxInflight: resolved.modelMaxInflight ?? Math.max(64, resolved.modelMaxConcurrency ?? 4),
        maxRequestBytes: resolved.modelMaxRequestBytes,
        defaultTimeoutMs: resolved.modelTimeoutMs,
      },
    });
  } catch (error) {
    void (persistence ?? ownedJournal).close().catch(() => {});
    unlockDataDir();
    throw error;
  }
  const chatAgent = parts.agent === undefined ? new ChatAgent({ runtime, model: resolved.model }) : undefined;
  const buses = new SessionBuses(resolved.eventRingSize, (sessionId) => chatAgent?.forgetSession(sessionId));
  // The broker publishes on live sessions only: a late vote must not open a bus for a closed one.
  const permissions = new PermissionBroker({
    responseTimeoutMs: resolved.permissionResponseTimeoutMs,
    events: {
      publish: (sessionId, event) => {
        if (buses.has(sessionId) || isOpen(bridge, sessionId)) buses.publish(sessionId, event);
      },
    },
  });
  const agent = withPermissions(parts.agent ?? chatAgent!, permissions);
  const bridge: SessionBridge = new SessionBridge({
    agent,
    events: buses,
    store,
    workspaces: [resolved.workspace],
    maxPendingPromptsPerSession: resolved.maxPendingPromptsPerSession,
    promptDeadlineMs: resolved.promptDeadlineMs,
    maxSessions: resolved.maxSessions,
    maxSessionsPerWorkspace: resolved.maxSessionsPerWorkspace,
    terminalEventDelayMs: resolved.terminalEventDelayMs,
    onError: parts.onError,
    onTurnError: parts.onTurnError,
  });

  let draining = false;
  let closing: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    draining = true;
    try {
      await waitUntilIdle(bridge, resolved.drainTimeoutMs);
      await bridge.shutdown('daemon_shutdown');
      buses.closeAll('daemon_shutdown');
      await runtime.shutdown({ abortRunning: true });
      await (persistence ?? ownedJournal).close();
    } finally {
      // Whatever failed on the way, this daemon is done with the directory.
      unlockDataDir();
    }
  };
  return {
    config: resolved,
    runtime,
    bridge,
    buses,
    permissions,
    journal: ownedJournal,
    get draining() {
      return draining;
    },
    close: () => (closing ??= close()),
  };
}

function buildProvider(config: ResolvedDaemonConfig): ModelProvider {
  // `@sluice/runtime/openai` loads the `openai` SDK (~150 modules), so it is not imported here:
  // the caller builds the provider (the CLI does, see `openAIProvider` in cli/serve.ts).
  if (config.provider === 'openai')
    throw new DaemonConfigError(
      'provider',
      'provider "openai" must be passed in as parts.provider (OpenAIProvider from @sluice/runtime/openai)',
    );
  return new EchoProvider({ latencyMs: config.echoDelayMs });
}

/** Whether the session is live and open (not closing): what may still publish or be subscribed. */
export function isOpen(bridge: SessionBridge, sessionId: string): boolean {
  try {
    bridge.status(sessionId);
    return true;
  } catch {
    return false;
  }
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
