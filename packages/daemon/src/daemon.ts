import { mkdirSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { EchoProvider, ModelRuntime, SqliteJournal, type Journal, type ModelProvider } from '@sluice/runtime';
import { z } from 'zod';
import { ChatAgent } from './agents/chat-agent.js';
import { EventBus, MAX_RING_SIZE } from './events/index.js';
import type { Agent } from './sessions/agent.js';
import { PermissionBroker, withPermissions } from './permissions/index.js';
import { SessionBridge } from './sessions/session-bridge.js';
import { SESSION_EVENT, type SessionEvent, type SessionEventSink } from './sessions/session-events.js';
import type { SessionStore } from './sessions/session-store.js';
import { SqliteSessionStore } from './persistence/sqlite-session-store.js';

const MAX_TIMER_MS = 2 ** 31 - 1;

const nonNegativeInt = z.number().int().nonnegative();
const positiveInt = z.number().int().positive();

/** The daemon's configuration as the CLI (or a host) supplies it; validated by {@link resolveDaemonConfig}. */
const daemonConfigSchema = z.strictObject({
  /** Absolute root of the served workspace; default the process's cwd. */
  workspace: z.string().min(1).optional(),
  /** Directory of the SQLite journal; default `.sluice`. */
  dataDir: z.string().min(1).default('.sluice'),
  provider: z.enum(['echo', 'openai']).default('echo'),
  /** Model name (required for `openai`). */
  model: z.string().min(1).optional(),
  /** OpenAI-compatible base URL including `/v1`. */
  baseURL: z.url({ protocol: /^https?$/ }).optional(),
  /** API key of the OpenAI-compatible endpoint; default env `OPENAI_API_KEY`. */
  apiKey: z.string().optional(),
  /** Simulated latency of the echo model (ms before its first delta). */
  echoDelayMs: nonNegativeInt.max(MAX_TIMER_MS).default(0),
  maxPendingPromptsPerSession: nonNegativeInt.default(5),
  promptDeadlineMs: positiveInt.max(MAX_TIMER_MS).optional(),
  maxSessions: positiveInt.optional(),
  maxSessionsPerWorkspace: positiveInt.optional(),
  eventRingSize: positiveInt.max(MAX_RING_SIZE).default(8000),
  modelMaxConcurrency: positiveInt.optional(),
  modelMaxQueued: nonNegativeInt.optional(),
  modelMaxInflight: positiveInt.optional(),
  modelMaxRequestBytes: positiveInt.optional(),
  modelTimeoutMs: positiveInt.max(MAX_TIMER_MS).optional(),
  /** Terminal events wait at least this long after admission (PROTOCOL §5 client race). */
  terminalEventDelayMs: nonNegativeInt.max(1000).default(10),
  /** An unanswered permission request picks a reject option after this long; `0` = never (PROTOCOL §7). */
  permissionResponseTimeoutMs: nonNegativeInt.max(MAX_TIMER_MS).default(300_000),
  /** How long `close()` lets pending prompts finish before cancelling them. */
  drainTimeoutMs: nonNegativeInt.max(MAX_TIMER_MS).default(10_000),
});

/** Input of {@link createDaemon}: every field optional, with the documented defaults. */
export type DaemonConfig = z.input<typeof daemonConfigSchema>;
/** The validated configuration. */
export type ResolvedDaemonConfig = z.output<typeof daemonConfigSchema> & { workspace: string };

/** Things a test or host may inject instead of what the config builds. */
export interface DaemonParts {
  journal?: Journal;
  provider?: ModelProvider;
  agent?: Agent;
  store?: SessionStore;
  onError?: (error: unknown, context: string) => void;
}

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

/** Validates `config`, fills in the defaults and throws {@link DaemonConfigError} naming a bad value. */
export function resolveDaemonConfig(config: DaemonConfig = {}): ResolvedDaemonConfig {
  const parsed = daemonConfigSchema.safeParse(config);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const setting = issue?.path.join('.') || 'config';
    const value =
      issue && issue.path.length > 0 ? (config as Record<string, unknown>)[String(issue.path[0])] : config;
    throw new DaemonConfigError(
      setting,
      `${setting}: ${issue?.message ?? 'invalid'} (got ${JSON.stringify(value) ?? String(value)})`,
    );
  }
  const data = parsed.data;
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
  return { ...data, workspace: resolve(workspace) };
}

/**
 * One event bus per session, fed by the bridge through the {@link SessionEventSink} it
 * sees. A bus is made on first use and closed right after its session's `session_closed`.
 */
export class SessionBuses implements SessionEventSink {
  private readonly buses = new Map<string, EventBus>();

  constructor(
    private readonly ringSize: number,
    private readonly onSessionClosed: (sessionId: string) => void = () => {},
  ) {}

  /** The session's bus; the caller has checked that the session is live. */
  busFor(sessionId: string): EventBus {
    let bus = this.buses.get(sessionId);
    if (bus === undefined) {
      bus = new EventBus({ ringSize: this.ringSize });
      this.buses.set(sessionId, bus);
    }
    return bus;
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
      this.onSessionClosed(sessionId);
    }
  }

  closeAll(reason: string): void {
    for (const bus of this.buses.values()) bus.close(reason);
    this.buses.clear();
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
  const provider = parts.provider ?? buildProvider(resolved);
  let journal = parts.journal;
  let store = parts.store;
  let ownedStore: SqliteSessionStore | undefined;
  if (journal === undefined) {
    const dataDir = resolve(resolved.dataDir);
    mkdirSync(dataDir, { recursive: true });
    const path = join(dataDir, 'journal.db');
    journal = new SqliteJournal({ path });
    // Sessions and their conversations live in the same database as the journal.
    if (store === undefined) store = ownedStore = new SqliteSessionStore({ path });
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
    void ownedStore?.close().catch(() => {});
    void ownedJournal.close().catch(() => {});
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
  });

  let draining = false;
  let closing: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    draining = true;
    await waitUntilIdle(bridge, resolved.drainTimeoutMs);
    await bridge.shutdown('daemon_shutdown');
    buses.closeAll('daemon_shutdown');
    await runtime.shutdown({ abortRunning: true });
    await ownedStore?.close();
    await ownedJournal.close();
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
