import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { DaemonConfigError, resolveDaemonConfig, type DaemonConfig } from '../config.js';
import { loadProviders, modelSpecs, needsLoading } from '../models/index.js';
import type { CommandOptions } from '../settings/index.js';
import { createDaemon, type Daemon, type DaemonParts, type DaemonStorage } from '../daemon.js';
import {
  buildServer,
  isLoopbackHost,
  listenAgentGateway,
  type AgentGatewayListener,
  type ServerOptions,
} from '../http/index.js';
import { readTlsFiles, type TlsFiles } from './tls-files.js';
import { FLAG_OF, daemonConfig } from './flag-config.js';
import { openFleetStorage, type FleetStorageEvents } from './fleet-storage.js';
import { fleetCapacity } from './fleet-capacity.js';
import { LazyLogger } from './lazy-logger.js';
import { serveRateLimit } from './rate-limits.js';
import { DaemonTap } from '../observe/index.js';
import { StartupError, settingName, type OptionSources } from './startup-error.js';

/** The parsed options of the daemon's settings (`sluice acp`'s, and `serve`'s but the HTTP server's). */
export type DaemonFlags = CommandOptions<'daemon' | 'command'> & OptionSources;

/** Parsed options of `sluice serve`: one for each setting of the table (settings/). */
export type ServeOptions = DaemonFlags & CommandOptions<'serve'>;

export { StartupError } from './startup-error.js';

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

/** The daemon the flags describe; a bad flag becomes a {@link StartupError} naming it. */
export async function daemonFromFlags(
  options: DaemonFlags,
  parts: DaemonParts = {},
  warn: (message: string) => void = () => {},
  fleetEvents: FleetStorageEvents = { leaseLost: () => {}, error: () => {} },
): Promise<Daemon> {
  try {
    const config = daemonConfig(options);
    // A provider that loads an SDK is loaded here, once every flag is known to be valid.
    const specs = modelSpecs(resolveDaemonConfig(config));
    const providers = needsLoading(specs) ? await loadProviders(specs, warn) : undefined;
    const withProvider = providers === undefined ? parts : { ...parts, providers };
    // Only a fleet loads the fleet backends (and their Redis and PostgreSQL clients).
    if (config.store === undefined && config.fleetRedis === undefined)
      return createDaemon(config, withProvider);
    const resolved = resolveDaemonConfig(config); // every flag named before a service is touched
    const capacity =
      config.fleetRedis === undefined ? undefined : await fleetCapacity(resolved, parts.agentLog);
    let storage: DaemonStorage | undefined;
    try {
      if (config.store !== undefined)
        storage = await openSharedStore({ ...config, store: config.store }, fleetEvents);
      return createDaemon(config, {
        ...withProvider,
        ...(storage === undefined ? {} : { storage }),
        ...(capacity === undefined ? {} : { capacity }),
      });
    } catch (error) {
      await storage?.close().catch(() => {});
      await capacity?.close();
      throw error;
    }
  } catch (error) {
    if (error instanceof DaemonConfigError)
      throw new StartupError(
        `${settingName(FLAG_OF[error.setting] ?? error.setting, options)}: ${error.message}`,
      );
    if (error instanceof RangeError || error instanceof TypeError) throw new StartupError(error.message);
    throw error;
  }
}

/** The fleet's shared store; its refusals (unreachable, migrated by a newer build) name `--store`. */
async function openSharedStore(
  config: DaemonConfig & { store: string },
  events: FleetStorageEvents,
): Promise<DaemonStorage> {
  try {
    return await openFleetStorage(config, events);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'store_unreachable' || code === 'store_schema_too_new')
      throw new StartupError(`--store: ${(error as Error).message}`, code);
    if (error instanceof RangeError) throw new StartupError(`--store: ${error.message}`);
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
export function operatorLog(
  logger: LazyLogger,
): Pick<DaemonParts, 'onError' | 'onTurnError' | 'agentLog' | 'onJournalPruned'> {
  return {
    agentLog: logger,
    onJournalPruned: (report) => logger.info(report, 'journal pruned'),
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
  logger: LazyLogger = logFromEnv(env, 'sluice'),
): Promise<RunningServer> {
  const tls = await readTlsFiles(options);
  let token = resolveToken(options.token, env);
  const loopback = isLoopbackHost(options.hostname);
  if (token === undefined && (!loopback || options.requireAuth)) {
    token = randomBytes(32).toString('base64url');
    // Printed so that the operator can use it: a field of a line written whatever the level.
    logger.always('warn', { token }, 'no token given; generated a bearer token');
  }
  // Agent processes call the model gateway on this server; its port is known once it listens.
  const gateway: { url?: string } = {};
  const store = sharedStoreEvents(logger);
  const daemon = await daemonFromFlags(
    options,
    {
      ...operatorLog(logger),
      gatewayUrl: () => gateway.url,
      ...(options.metrics === false ? {} : { tap: new DaemonTap() }),
    },
    (message) => logger.warn({}, message),
    store,
  );
  const rateLimit = await serveRateLimit(options, logger);
  // Under TLS, agent processes reach the gateway on a loopback listener of their own (below).
  const agents: { listener?: AgentGatewayListener } = {};
  const app = buildServer(daemon, {
    ...serverOptions(options, token, logger),
    ...(tls === undefined ? {} : { tls, agentGatewayPort: () => agents.listener?.port ?? 0 }),
    ...(rateLimit.options === undefined ? {} : { rateLimit: rateLimit.options }),
  });
  const port = await listenOrRefuse(app, daemon, options).catch(async (error: unknown) => {
    await rateLimit.close();
    throw error;
  });
  const host = options.hostname.includes(':') ? `[${options.hostname}]` : options.hostname;
  gateway.url = `http://${gatewayHost(options.hostname, host)}:${port}/v1`;
  if (tls !== undefined && daemon.agentPool !== undefined) {
    agents.listener = await listenAgentGateway(app, options);
    gateway.url = agents.listener.url;
  }
  // The first sessions join a process started now, not at their create (docs/decisions/030).
  daemon.agentPool?.preheat();
  const url = `${tls === undefined ? 'http' : 'https'}://${host}:${port}`;
  // The line fastify logged when it had the logger (it no longer does, see buildServer).
  logger.info(`Server listening at ${url}`);
  if (tls !== undefined) logTls(logger, tls, agents.listener);
  let stopping: Promise<void> | undefined;
  const running: RunningServer = {
    daemon,
    app,
    url,
    stop: () =>
      (stopping ??= (async () => {
        await daemon.close();
        await agents.listener?.close();
        const force = setTimeout(() => app.server.closeAllConnections(), 2_000);
        force.unref();
        await app.close();
        clearTimeout(force);
        await rateLimit.close();
        await logger.flush();
      })()),
  };
  store.running = running;
  // The journal opens now, off the start-up path, and settles what a killed daemon left. Files
  // written by a newer build are refused: the daemon stops rather than fail every call.
  daemon.recover().then(
    ({ interruptedCalls }) => logger.info({ interruptedCalls }, 'journal recovered'),
    (error: unknown) => {
      if (!isSchemaTooNew(error)) return logger.error({ err: error }, 'journal recovery failed');
      logger.always('error', {}, (error as Error).message);
      void running.stop().finally(() => process.exit(1));
    },
  );
  return running;
}

/** Listens on `--hostname`/`--port` and returns the bound port; a refusal closes the daemon and names the flag. */
async function listenOrRefuse(app: FastifyInstance, daemon: Daemon, options: ServeOptions): Promise<number> {
  try {
    await app.listen({ port: options.port, host: options.hostname });
  } catch (error) {
    await daemon.close().catch(() => {});
    // A taken or privileged port is the port's fault; anything else (no such address) the host's.
    const code = (error as { code?: unknown }).code;
    const flag = code === 'EADDRINUSE' || code === 'EACCES' ? '--port' : '--hostname';
    throw new StartupError(
      `${flag}: cannot listen on ${options.hostname}:${options.port}: ${(error as Error).message}`,
      'listen_failed',
    );
  }
  const address = app.server.address();
  return typeof address === 'object' && address !== null ? address.port : options.port;
}

/** Says what TLS serves with: the certificate's file and expiry (a warning once it has expired), the agents' port. */
function logTls(logger: LazyLogger, tls: TlsFiles, listener: AgentGatewayListener | undefined): void {
  const fields = {
    certFile: tls.certFile,
    validTo: tls.validTo.toISOString(),
    ...(listener === undefined ? {} : { agentGateway: listener.url }),
  };
  if (tls.validTo.getTime() < Date.now())
    logger.always('warn', fields, 'the TLS certificate has expired: clients will refuse it');
  else logger.info(fields, 'serving HTTPS');
}

/** The HTTP server's options from the flags: the bind, its auth, its bounds, its logs. */
function serverOptions(options: ServeOptions, token: string | undefined, logger: LazyLogger): ServerOptions {
  return {
    hostname: options.hostname,
    ...(token === undefined ? {} : { token }),
    requireAuth: options.requireAuth ?? false,
    allowOrigins: options.allowOrigin ?? [],
    ...(options.sseHeartbeatMs === undefined ? {} : { sseHeartbeatMs: options.sseHeartbeatMs }),
    ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
    ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
    logger,
    web: options.web !== false,
    ...(logger.enabled('debug') ? { requestLog: logger } : {}),
  };
}

/**
 * What the shared store (`--store`) reports while the daemon runs. A lost lease means another
 * daemon of the fleet took over this one's sessions and calls: it stops and exits 1, as for a
 * store written by a newer build.
 */
export function sharedStoreEvents(logger: LazyLogger): FleetStorageEvents & { running?: RunningServer } {
  const events: FleetStorageEvents & { running?: RunningServer } = {
    leaseLost: (error) => {
      logger.error({ err: error }, 'store lease lost');
      process.stderr.write(`error: ${error.message}\n`);
      void (events.running?.stop() ?? Promise.resolve()).finally(() => process.exit(1));
    },
    error: (error) => logger.error({ err: error }, 'shared store'),
  };
  return events;
}

/** A journal or session store written by a newer build. */
function isSchemaTooNew(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === 'journal_schema_too_new' || code === 'session_store_schema_too_new';
}
