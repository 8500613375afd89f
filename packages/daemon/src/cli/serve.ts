import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import type { ModelProvider } from '@sluice/runtime';
import type { FastifyInstance } from 'fastify';
import { DaemonConfigError, resolveDaemonConfig, type DaemonConfig } from '../config.js';
import { parseAgentSpec, type AgentCommand } from '../agents/index.js';
import { createDaemon, type Daemon, type DaemonParts } from '../daemon.js';
import { buildServer, isLoopbackHost } from '../http/index.js';
import { fleetCapacity } from './fleet-capacity.js';
import { LazyLogger } from './lazy-logger.js';

/** Config keys as the flags that set them, for error messages. */
const FLAG_OF: Record<string, string> = {
  workspace: '--workspace',
  dataDir: '--data-dir',
  provider: '--provider',
  model: '--model',
  baseURL: '--base-url',
  echoDelayMs: '--echo-delay-ms',
  maxPendingPromptsPerSession: '--max-pending-prompts-per-session',
  promptDeadlineMs: '--prompt-deadline-ms',
  maxSessions: '--max-sessions',
  maxSessionsPerWorkspace: '--max-sessions-per-workspace',
  eventRingSize: '--event-ring-size',
  eventRingBytes: '--event-ring-bytes',
  eventMemoryBytes: '--event-memory-bytes',
  modelMaxConcurrency: '--model-max-concurrency',
  modelMaxQueued: '--model-max-queued',
  modelMaxInflight: '--model-max-inflight',
  modelMaxRequestBytes: '--model-max-request-bytes',
  modelTimeoutMs: '--model-timeout-ms',
  drainTimeoutMs: '--drain-timeout-ms',
  permissionResponseTimeoutMs: '--permission-response-timeout-ms',
  agents: '--agent',
  agentSessionsPerProcess: '--agent-sessions-per-process',
  agentMaxProcesses: '--agent-max-processes',
  agentIdleTimeoutMs: '--agent-idle-timeout-ms',
  agentLivenessTimeoutMs: '--agent-liveness-timeout-ms',
  fleetRedis: '--fleet-redis',
  fleetName: '--fleet-name',
  fleetOnOutage: '--fleet-on-outage',
  fleetLeaseTtlMs: '--fleet-lease-ttl-ms',
  fleetRequestsPerMinute: '--fleet-rpm',
  fleetTokensPerMinute: '--fleet-tpm',
};

/** Parsed options of `sluice serve`. */
export interface ServeOptions {
  port: number;
  hostname: string;
  token?: string;
  requireAuth?: boolean;
  allowOrigin?: string[];
  workspace?: string;
  maxPendingPromptsPerSession: number;
  promptDeadlineMs?: number;
  maxSessions?: number;
  maxSessionsPerWorkspace?: number;
  eventRingSize?: number;
  eventRingBytes?: number;
  eventMemoryBytes?: number;
  modelMaxConcurrency?: number;
  modelMaxQueued?: number;
  modelMaxInflight?: number;
  modelMaxRequestBytes?: number;
  modelTimeoutMs?: number;
  provider: 'echo' | 'openai';
  model?: string;
  baseUrl?: string;
  echoDelayMs?: number;
  dataDir: string;
  sseHeartbeatMs?: number;
  requestTimeoutMs?: number;
  maxConnections?: number;
  drainTimeoutMs?: number;
  permissionResponseTimeoutMs?: number;
  /** `--agent` values as given: `"<command> [args…]"` or `name="<command> [args…]"`. */
  agent?: string[];
  agentSessionsPerProcess?: number;
  agentMaxProcesses?: number;
  agentIdleTimeoutMs?: number;
  agentLivenessTimeoutMs?: number;
  fleetRedis?: string;
  fleetName?: string;
  fleetOnOutage?: 'local' | 'refuse';
  fleetLeaseTtlMs?: number;
  fleetRpm?: number;
  fleetTpm?: number;
}

/** Thrown for a start-up refusal; the CLI prints the message and exits 1. */
export class StartupError extends Error {}

/** The token to require: flag, then `SLUICE_TOKEN`, then `QWEN_SERVER_TOKEN`; empty refuses. */
export function resolveToken(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const sources: Array<[string, string | undefined]> = [
    ['--token', flag],
    ['SLUICE_TOKEN', env['SLUICE_TOKEN']],
    ['QWEN_SERVER_TOKEN', env['QWEN_SERVER_TOKEN']],
  ];
  for (const [name, value] of sources) {
    if (value === undefined) continue;
    if (value.trim().length === 0)
      throw new StartupError(`${name} is empty; refusing to start with an empty token`);
    return value.trim();
  }
  return undefined;
}

function daemonConfig(options: Omit<ServeOptions, 'port' | 'hostname'>): DaemonConfig {
  const config: DaemonConfig = {
    workspace: resolve(options.workspace ?? process.cwd()),
    dataDir: options.dataDir,
    provider: options.provider,
    maxPendingPromptsPerSession: options.maxPendingPromptsPerSession,
  };
  const optional: Array<[keyof DaemonConfig, unknown]> = [
    ['model', options.model],
    ['baseURL', options.baseUrl],
    ['echoDelayMs', options.echoDelayMs],
    ['promptDeadlineMs', options.promptDeadlineMs],
    ['maxSessions', options.maxSessions],
    ['maxSessionsPerWorkspace', options.maxSessionsPerWorkspace],
    ['eventRingSize', options.eventRingSize],
    ['eventRingBytes', options.eventRingBytes],
    ['eventMemoryBytes', options.eventMemoryBytes],
    ['modelMaxConcurrency', options.modelMaxConcurrency],
    ['modelMaxQueued', options.modelMaxQueued],
    ['modelMaxInflight', options.modelMaxInflight],
    ['modelMaxRequestBytes', options.modelMaxRequestBytes],
    ['modelTimeoutMs', options.modelTimeoutMs],
    ['drainTimeoutMs', options.drainTimeoutMs],
    ['permissionResponseTimeoutMs', options.permissionResponseTimeoutMs],
    ['agents', options.agent?.map(agentSpec)],
    ['agentSessionsPerProcess', options.agentSessionsPerProcess],
    ['agentMaxProcesses', options.agentMaxProcesses],
    ['agentIdleTimeoutMs', options.agentIdleTimeoutMs],
    ['agentLivenessTimeoutMs', options.agentLivenessTimeoutMs],
    ['fleetRedis', options.fleetRedis],
    ['fleetName', options.fleetName],
    ['fleetOnOutage', options.fleetOnOutage],
    ['fleetLeaseTtlMs', options.fleetLeaseTtlMs],
    ['fleetRequestsPerMinute', options.fleetRpm],
    ['fleetTokensPerMinute', options.fleetTpm],
  ];
  for (const [key, value] of optional)
    if (value !== undefined) (config as Record<string, unknown>)[key] = value;
  return config;
}

/** One `--agent` value as a named command; a bad one is a {@link DaemonConfigError} of `agents`. */
function agentSpec(spec: string): AgentCommand {
  try {
    return parseAgentSpec(spec);
  } catch (error) {
    throw new DaemonConfigError('agents', (error as Error).message);
  }
}

/**
 * The OpenAI-compatible provider of `config`, validated first so that a bad flag is named before
 * anything loads; `@sluice/runtime/openai` (the `openai` SDK, ~150 modules) is imported only here.
 */
async function openAIProvider(config: DaemonConfig, warn: (message: string) => void): Promise<ModelProvider> {
  const resolved = resolveDaemonConfig(config);
  if (resolved.apiKey === undefined && !process.env['OPENAI_API_KEY'])
    warn(
      `--provider openai: no API key (OPENAI_API_KEY is unset), so no Authorization header is sent to ${resolved.baseURL ?? process.env['OPENAI_BASE_URL'] ?? 'https://api.openai.com/v1'}; set OPENAI_API_KEY unless the server needs none`,
    );
  const { OpenAIProvider } = await import('@sluice/runtime/openai');
  return new OpenAIProvider({
    model: resolved.model!,
    ...(resolved.baseURL === undefined ? {} : { baseURL: resolved.baseURL }),
    ...(resolved.apiKey === undefined ? {} : { apiKey: resolved.apiKey }),
  });
}

/** The daemon the flags describe; a bad flag becomes a {@link StartupError} naming it. */
export async function daemonFromFlags(
  options: Omit<ServeOptions, 'port' | 'hostname'>,
  parts: DaemonParts = {},
  warn: (message: string) => void = () => {},
): Promise<Daemon> {
  try {
    const config = daemonConfig(options);
    const provider = config.provider === 'openai' ? await openAIProvider(config, warn) : undefined;
    const withProvider = provider === undefined ? parts : { ...parts, provider };
    // Only a fleet loads the fleet backend (and its Redis client).
    if (config.fleetRedis === undefined) return createDaemon(config, withProvider);
    const capacity = await fleetCapacity(resolveDaemonConfig(config), parts.agentLog);
    try {
      return createDaemon(config, { ...withProvider, capacity });
    } catch (error) {
      await capacity.close();
      throw error;
    }
  } catch (error) {
    if (error instanceof DaemonConfigError)
      throw new StartupError(`${FLAG_OF[error.setting] ?? error.setting}: ${error.message}`);
    if (error instanceof RangeError || error instanceof TypeError) throw new StartupError(error.message);
    throw error;
  }
}

/** The log of `SLUICE_LOG_LEVEL` (default `info`); an unknown level is a {@link StartupError}. */
export function logFromEnv(env: NodeJS.ProcessEnv, name: string): LazyLogger {
  try {
    return new LazyLogger({ level: env['SLUICE_LOG_LEVEL'] ?? 'info', name, setting: 'SLUICE_LOG_LEVEL' });
  } catch (error) {
    throw new StartupError((error as Error).message);
  }
}

/**
 * What an operator reads of the daemon's failures: every turn that ended `turn_error` (ids and
 * codes; the message only of a provider failure — what the upstream said, the key to check — as
 * an agent's own message may quote the prompt), and the failures clients are not told about.
 */
export function operatorLog(logger: LazyLogger): Pick<DaemonParts, 'onError' | 'onTurnError' | 'agentLog'> {
  return {
    agentLog: logger,
    onTurnError: ({ message, ...failure }) =>
      logger.warn(failure.code === 'model_provider_error' ? { ...failure, message } : failure, 'turn failed'),
    onError: (error, context) =>
      logger.error(
        { context, error: error instanceof Error ? error.message : String(error) },
        'daemon error',
      ),
  };
}

/** Where a local agent process reaches this server: the bound address, loopback for a wildcard. */
function gatewayHost(hostname: string, bracketed: string): string {
  if (hostname === '0.0.0.0') return '127.0.0.1';
  if (hostname === '::' || hostname === '[::]') return '[::1]';
  return bracketed;
}

/** A running `sluice serve`. */
export interface RunningServer {
  daemon: Daemon;
  app: FastifyInstance;
  url: string;
  /** Drains the daemon, then closes the HTTP server. */
  stop(): Promise<void>;
}

/** Starts the daemon and its HTTP server; throws {@link StartupError} with a message naming the flag. */
export async function serve(
  options: ServeOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunningServer> {
  let token = resolveToken(options.token, env);
  const loopback = isLoopbackHost(options.hostname);
  if (token === undefined && (!loopback || options.requireAuth)) {
    token = randomBytes(32).toString('base64url');
    process.stderr.write(`sluice: no token given; generated bearer token: ${token}\n`);
  }
  const logger = logFromEnv(env, 'sluice');
  // Agent processes call the model gateway on this server; its port is known once it listens.
  const gateway: { url?: string } = {};
  const daemon = await daemonFromFlags(
    options,
    { ...operatorLog(logger), gatewayUrl: () => gateway.url },
    (message) => logger.warn({}, message),
  );
  const app = buildServer(daemon, {
    hostname: options.hostname,
    ...(token === undefined ? {} : { token }),
    requireAuth: options.requireAuth ?? false,
    allowOrigins: options.allowOrigin ?? [],
    ...(options.sseHeartbeatMs === undefined ? {} : { sseHeartbeatMs: options.sseHeartbeatMs }),
    ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
    ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
    logger,
  });
  try {
    await app.listen({ port: options.port, host: options.hostname });
  } catch (error) {
    await daemon.close().catch(() => {});
    // A taken or privileged port is the port's fault; anything else (no such address) the host's.
    const code = (error as { code?: unknown }).code;
    const flag = code === 'EADDRINUSE' || code === 'EACCES' ? '--port' : '--hostname';
    throw new StartupError(
      `${flag}: cannot listen on ${options.hostname}:${options.port}: ${(error as Error).message}`,
    );
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const host = options.hostname.includes(':') ? `[${options.hostname}]` : options.hostname;
  gateway.url = `http://${gatewayHost(options.hostname, host)}:${port}/v1`;
  // The line fastify logged when it had the logger (it no longer does, see buildServer).
  logger.info(`Server listening at http://${host}:${port}`);
  let stopping: Promise<void> | undefined;
  const running: RunningServer = {
    daemon,
    app,
    url: `http://${host}:${port}`,
    stop: () =>
      (stopping ??= (async () => {
        await daemon.close();
        const force = setTimeout(() => app.server.closeAllConnections(), 2_000);
        force.unref();
        await app.close();
        clearTimeout(force);
        await logger.flush();
      })()),
  };
  // The journal opens now, off the start-up path, and settles what a killed daemon left. Files
  // written by a newer build are refused: the daemon stops rather than fail every call.
  daemon.recover().then(
    ({ interruptedCalls }) => logger.info({ interruptedCalls }, 'journal recovered'),
    (error: unknown) => {
      logger.error({ err: error }, 'journal recovery failed');
      if (!isSchemaTooNew(error)) return;
      process.stderr.write(`error: ${(error as Error).message}\n`);
      void running.stop().finally(() => process.exit(1));
    },
  );
  return running;
}

/** A journal or session store written by a newer build. */
function isSchemaTooNew(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === 'journal_schema_too_new' || code === 'session_store_schema_too_new';
}
