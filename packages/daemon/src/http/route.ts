import type { ModelCatalogue, ModelRuntime, Journal } from '@sluice/runtime';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AcpDaemon, AcpHttpRegistryOptions } from '../acp/index.js';
import type { DurableBudgets } from '../budgets/index.js';
import type { ObservedDaemon } from '../observe/index.js';
import type { BrowserCookie } from './browser-cookie.js';
import type { FailureLog } from './internal-error.js';
import type { PermissionBroker } from '../permissions/index.js';
import type { SessionBridge } from '../sessions/index.js';
import { rateTierOf, type RateTier, type RouteDoc } from './openapi/route-doc.js';
import type { RateLimitOptions } from './rate-limit.js';
import { registerJsonBody } from './json-body.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The rate-limit tier of the route; absent: exempt (docs/decisions/035). */
    rateTier?: RateTier;
  }
}

/** What route handlers are built from: the daemon's parts (never `Daemon` itself) and settings. */
export interface RouteParts {
  sessions: SessionBridge;
  permissions: PermissionBroker;
  /** The default model's runtime. */
  runtime: ModelRuntime;
  /** The model catalogue: every model by name, for the gateway (`/v1`). */
  models: ModelCatalogue;
  journal: Journal;
  budgets: DurableBudgets;
  /** The primary workspace (`/capabilities`). */
  workspace: string;
  heartbeatMs: number;
  /** The daemon's bearer token, when it has one. */
  token: string | undefined;
  /** The dashboard's sign-in cookie: present when the daemon has a token and serves the dashboard. */
  dashboardCookie: BrowserCookie | undefined;
  /** The web client's sign-in cookie: present when the daemon has a token and serves the web client. */
  webCookie: BrowserCookie | undefined;
  /** ACP over HTTP: the daemon as ACP sees it, and its limits. */
  acp: { daemon: AcpDaemon; options: Partial<AcpHttpRegistryOptions> };
  /** The daemon's counters; present exactly when the {@link Route.metrics} routes are served. */
  observed: ObservedDaemon | undefined;
  /** The routes this server serves, as `GET /openapi.json` describes them. */
  routes: readonly RouteDoc[];
  /** The per-client rate limits (`--rate-limit`), when on: `/capabilities` advertises them. */
  rateLimit: Pick<RateLimitOptions, 'limits' | 'windowMs'> | undefined;
  /** The external agents' processes (sessions, RSS, memory budget), when the daemon runs agents. */
  agents?: () => unknown;
  /** Where internal errors a route handles itself (a stream's, after its head) are logged. */
  log?: FailureLog | undefined;
}

/** A handler, typed by the route's path parameters and query. */
export type RouteHandler<Params, Query> = (
  this: FastifyInstance,
  request: FastifyRequest<{ Params: Params; Querystring: Query }>,
  reply: FastifyReply,
) => unknown;

/** What a route adds to its description to be served. */
export interface RouteServing<Params, Query> {
  /** Builds the handler from the server's parts, once per server (`app` is the root instance). */
  handler(parts: RouteParts, app: FastifyInstance): RouteHandler<Params, Query>;
  /** Answers errors its own way (the model gateway, in OpenAI's shape). */
  errorHandler?: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void;
  /** The body reaches the handler as text: the route parses it (JSON-RPC answers bad JSON itself). */
  rawBody?: boolean;
  /**
   * The parsed JSON body keeps the bytes it was read from, for `jsonSourceOf` (the model gateway
   * passes an agent's large members on as they came, docs/decisions/042).
   */
  jsonSource?: boolean;
  /**
   * The route also takes an HTML form's body (`application/x-www-form-urlencoded`, at most 4 KiB),
   * which reaches the handler as `URLSearchParams`.
   */
  formBody?: boolean;
}

/** The largest form body a {@link RouteServing.formBody} route reads. */
const FORM_BODY_LIMIT_BYTES = 4096;

/**
 * One route as data: its description (method, path, schemas, responses, summary — what
 * `/openapi.json`, the route reference and the fuzz test read) and how it is mounted. The
 * server registers exactly the routes of `routes/index.ts`, each at its described method and path.
 */
export interface Route extends RouteDoc {
  /** Served only by a daemon with its counters on (`--no-metrics` drops it). */
  metrics?: boolean;
  /** Served only by a daemon that serves the web client (`--no-web` drops it). */
  web?: boolean;
  /** Registers the route's handler on `app`. */
  mount(app: FastifyInstance, parts: RouteParts): void;
}

/** A {@link Route} from its description and its handler; the path and method come from the description. */
export function defineRoute<Params = Record<string, string>, Query = Record<string, unknown>>(
  doc: RouteDoc & { metrics?: boolean; web?: boolean },
  serving: RouteServing<Params, Query>,
): Route {
  return {
    ...doc,
    mount(app, parts) {
      const handler = serving.handler(parts, app);
      // The tier the rate limiter counts the route in (http/rate-limit.ts), read per request.
      const rateTier = rateTierOf(doc);
      const register = (scope: FastifyInstance): void => {
        scope.route<{ Params: Params; Querystring: Query }>({
          method: doc.method,
          url: doc.path,
          handler,
          ...(rateTier === undefined ? {} : { config: { rateTier } }),
          ...(serving.errorHandler === undefined ? {} : { errorHandler: serving.errorHandler }),
        });
      };
      if (serving.rawBody !== true && serving.formBody !== true && serving.jsonSource !== true)
        return register(app);
      void app.register(async (scope) => {
        if (serving.jsonSource === true) registerJsonBody(scope, { keepSource: true });
        if (serving.rawBody === true) {
          scope.removeContentTypeParser('application/json');
          scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) =>
            done(null, body),
          );
        }
        if (serving.formBody === true)
          scope.addContentTypeParser(
            'application/x-www-form-urlencoded',
            { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT_BYTES },
            (_request, body, done) => done(null, new URLSearchParams(body as string)),
          );
        register(scope);
      });
    },
  };
}

/** `value`, which the route's serving condition guarantees; a clear failure if it does not. */
export function present<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} is needed by this route but the server has none`);
  return value;
}
