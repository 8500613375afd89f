import type { AddressInfo } from 'node:net';
import { SessionNotFoundError } from '../sessions/index.js';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { clipText } from '@sluice/protocol';
import type { Daemon } from '../daemon.js';
import { DEFAULT_SSE_HEARTBEAT_MS, mapError } from '../wire/index.js';
import { registerJsonBody } from './json-body.js';
import { requestLogHook, type RequestLog } from './request-log.js';
import type { AcpHttpRegistryOptions } from '../acp/index.js';
import { gatewayNotFound, isGatewayUrl, servedRoutes } from './routes/index.js';
import type { RouteParts } from './route.js';
import { securityGate } from './security.js';
import { logIfInternal, type FailureLog } from './internal-error.js';

export type { FailureLog } from './internal-error.js';
import { registerRateLimit, type RateLimitOptions } from './rate-limit.js';
import { DASHBOARD_DOOR, WEB_DOOR, doorCookie } from './browser-sign-in.js';
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_REQUEST_TIMEOUT_MS } from '../defaults.js';
import { positiveInteger } from '../validate.js';

/** Request bodies larger than this are refused with 413 (PROTOCOL §1). */
export const BODY_LIMIT_BYTES = 10 * 1024 * 1024;

function noSchemaCompiler(): () => never {
  return () => {
    throw new Error(
      'JSON-schema compilation is disabled in the Sluice server: validate the input in the route',
    );
  };
}

/** Options of {@link buildServer}. */
export interface ServerOptions {
  /** The hostname the server will bind; decides the Host allowlist and `/health` openness. */
  hostname: string;
  /** Bearer token; absent = open (loopback only — the CLI enforces that). */
  token?: string;
  requireAuth?: boolean;
  /** Origins allowed besides the daemon's own loopback origin. */
  allowOrigins?: readonly string[];
  /** Interval of the SSE heartbeat comment; default 15 s. */
  sseHeartbeatMs?: number;
  /** Limits of ACP over HTTP (connections, outstanding requests, session streams, idle timeout). */
  acp?: Partial<AcpHttpRegistryOptions>;
  /** Where failed requests are logged (never given prompt text); default nowhere. */
  logger?: FailureLog;
  /** A request's headers and body must arrive within this; default 30 s. Responses are not bounded. */
  requestTimeoutMs?: number;
  /** Open connections accepted at once; more are closed as they arrive. Default 4096. */
  maxConnections?: number;
  /** Where to write one line per request (`--log-level debug`); absent = requests are not logged. */
  requestLog?: RequestLog;
  /** Wall-clock ms for the expiry of browser sign-in cookies and rate-limit windows; default `Date.now`. */
  now?: () => number;
  /** Per-client rate limits by tier (`--rate-limit`, docs/decisions/035); absent: none. */
  rateLimit?: RateLimitOptions;
  /** Serve HTTPS with this PEM certificate and key (docs/decisions/034); absent = plain HTTP. */
  tls?: { cert: Buffer | string; key: Buffer | string };
  /**
   * The port of the loopback listener agent processes reach the gateway on under TLS
   * (http/agent-gateway-listener.ts), once it listens; its Host is then the daemon's own.
   */
  agentGatewayPort?: () => number;
  /** Serve the web client at `/` (docs/web.md); default true, `--no-web` turns it off. */
  web?: boolean;
}

/**
 * The daemon's HTTP server: security gates, JSON body handling, the REST + SSE routes of
 * PROTOCOL §3–§7 and one error mapping. Holds no business logic. Call `listen` on the result.
 */
export function buildServer(daemon: Daemon, options: ServerOptions): FastifyInstance {
  const heartbeatMs = positiveInteger('sseHeartbeatMs', options.sseHeartbeatMs ?? DEFAULT_SSE_HEARTBEAT_MS);
  if (options.token !== undefined && options.token.length === 0)
    throw new RangeError('token must not be empty; omit it to run without auth on loopback');

  const app = createFastify(options);
  // A browser's sign-in to the dashboard and to the web client, keyed by this token and a key drawn now.
  const token = options.token;
  const web = options.web ?? true;
  const cookieOf = (served: boolean, door: typeof WEB_DOOR) =>
    token !== undefined && served
      ? doorCookie(door, token, { secure: options.tls !== undefined, now: options.now })
      : undefined;
  const cookie = cookieOf(daemon.tap !== undefined, DASHBOARD_DOOR);
  const webCookie = cookieOf(web, WEB_DOOR);
  if (options.requestLog !== undefined) app.addHook('onResponse', requestLogHook(options.requestLog));

  // The bound port, read once it is known: the Host gate asks on every request.
  let boundPort = 0;
  const port = (): number =>
    boundPort || (boundPort = (app.server.address() as AddressInfo | null)?.port ?? 0);
  app.addHook(
    'onRequest',
    securityGate({
      hostname: options.hostname,
      port,
      scheme: options.tls === undefined ? 'http' : 'https',
      ...(options.agentGatewayPort === undefined ? {} : { agentGatewayPort: options.agentGatewayPort }),
      token: options.token,
      requireAuth: options.requireAuth ?? false,
      allowOrigins: options.allowOrigins ?? [],
      credentials: daemon.credentials,
      doors: [
        ...(daemon.tap === undefined ? [] : [{ door: DASHBOARD_DOOR, cookie }]),
        ...(web ? [{ door: WEB_DOOR, cookie: webCookie }] : []),
      ],
    }),
  );
  limitRates(app, daemon, options);
  registerJsonBody(app);

  const logger = options.logger;
  const routes = servedRoutes(daemon.tap !== undefined, web);
  answerErrors(app, daemon, routes, logger);

  const parts: RouteParts = {
    sessions: daemon.bridge,
    permissions: daemon.permissions,
    runtime: daemon.runtime,
    models: daemon.models,
    journal: daemon.journal,
    budgets: daemon.budgets,
    workspace: daemon.config.workspace,
    heartbeatMs,
    token: options.token,
    dashboardCookie: cookie,
    webCookie,
    acp: { daemon, options: { ...acpLog(logger), ...options.acp } },
    observed:
      daemon.tap === undefined
        ? undefined
        : {
            tap: daemon.tap,
            runtime: daemon.runtime,
            models: daemon.models,
            bridge: daemon.bridge,
            agentPool: daemon.agentPool,
          },
    routes,
    rateLimit: options.rateLimit,
    log: logger,
    agents: () => daemon.agentPool?.describe(),
  };
  for (const route of routes) route.mount(app, parts);
  return app;
}

/** The error and not-found answers of every route, and the log of internal errors. */
function answerErrors(
  app: FastifyInstance,
  daemon: Daemon,
  routes: ReturnType<typeof servedRoutes>,
  logger: FailureLog | undefined,
): void {
  // Before any route: every error a route answers, in any shape (the gateway's own), passes here.
  if (logger !== undefined) app.addHook('onError', internalErrorLog(logger));
  app.setErrorHandler(async (thrown, _request, reply) => {
    // A session that is stored but not loaded: say so (a store read, on the 404 path only).
    const error =
      thrown instanceof SessionNotFoundError ? await daemon.bridge.explainNotFound(thrown) : thrown;
    const mapped = mapError(error);
    void reply.code(mapped.statusCode).headers(mapped.headers).send(mapped.body);
  });
  const gatewayMiss = gatewayNotFound(routes);
  app.setNotFoundHandler((request, reply) => {
    if (isGatewayUrl(request.url)) return gatewayMiss(request, reply);
    const path = clipText(request.url.split('?', 1)[0] ?? '');
    void reply.code(404).send({ error: `Route ${request.method} ${path} not found` });
  });
}

/** `--rate-limit`, after the gate: only requests that passed it count against a client's limits. */
function limitRates(app: FastifyInstance, daemon: Daemon, options: ServerOptions): void {
  if (options.rateLimit === undefined) return;
  const tap = daemon.tap;
  registerRateLimit(app, options.rateLimit, {
    now: options.now ?? Date.now,
    ...(options.logger === undefined ? {} : { log: options.logger }),
    ...(tap === undefined ? {} : { refused: (tier) => tap.rateLimited.inc(tier) }),
  });
}

/**
 * The `onError` hook that logs an internal error ({@link logIfInternal}). fastify runs it before
 * the server's error handler and a route's own (the model gateway's), so each such failure is
 * logged once, on one path; a streamed answer's failure after its head logs itself.
 */
function internalErrorLog(logger: FailureLog) {
  return (request: FastifyRequest, _reply: FastifyReply, error: Error, done: () => void): void => {
    logIfInternal(logger, request, error);
    done();
  };
}

/** ACP's failure log: the server's, when it has one. */
function acpLog(logger: FailureLog | undefined): Partial<AcpHttpRegistryOptions> {
  if (logger === undefined) return {};
  return {
    log: (error: unknown, context: string) => logger.error({ err: error, context }, 'acp request failed'),
  };
}

/** The fastify instance, with the body limit and the bounds of requests and connections. */
function createFastify(options: ServerOptions): FastifyInstance {
  const requestTimeoutMs = positiveInteger(
    'requestTimeoutMs',
    options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
  );
  const maxConnections = positiveInteger('maxConnections', options.maxConnections ?? DEFAULT_MAX_CONNECTIONS);
  const bounds = serverBounds(requestTimeoutMs);
  const app = Fastify({
    bodyLimit: BODY_LIMIT_BYTES,
    // A slow body is answered 408 and its connection closed once the whole request has not
    // arrived in time; node checks every connection at `connectionsCheckingInterval`.
    requestTimeout: requestTimeoutMs,
    // With TLS, fastify hands only `https` to the server: the same bounds go there.
    ...(options.tls === undefined ? { http: bounds } : { https: { ...bounds, ...options.tls } }),
    return503OnClosing: true,
    // fastify gets no logger: with one it builds a child logger and response listeners for every
    // request (~3 % of the 503 path) and loads pino's fastify glue at start-up, though requests
    // are not logged. What the daemon logs (failed requests naming their route, ACP failures,
    // the listening line) goes to `options.logger` directly. fastify's own diagnostics of misuse
    // (a reply sent twice and the like) are no longer logged.
    logger: false,
    // The router's refusals (a malformed or over-long path parameter) answer from the one error
    // table too: fastify's own bodies quote the whole path (issue 28: no echoes).
    frameworkErrors: (error, _request, reply: FastifyReply) => {
      const mapped = mapError(error);
      void reply.code(mapped.statusCode).headers(mapped.headers).send(mapped.body);
    },
    // Routes validate their input in code (one error table, messages that name the value), so
    // fastify's JSON-schema compilers (ajv, fast-json-stringify: ~1/5 of start-up and several
    // MiB) are never loaded; a route that declared a schema would fail at registration.
    schemaController: {
      compilersFactory: { buildValidator: noSchemaCompiler, buildSerializer: noSchemaCompiler },
    },
  }) as unknown as FastifyInstance;
  app.server.maxConnections = maxConnections;
  return app;
}

/** The node server's bounds on a request's headers, for `requestTimeoutMs` (fastify's `http`/`https`). */
export function serverBounds(requestTimeoutMs: number): {
  headersTimeout: number;
  connectionsCheckingInterval: number;
} {
  return {
    headersTimeout: requestTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, Math.max(50, Math.floor(requestTimeoutMs / 4))),
  };
}
