import type { FastifyReply, FastifyRequest } from 'fastify';
import { AGENT_SESSION_HEADER, isSessionCredential, type GatewayCaller } from '../gateway/index.js';
import type { BrowserCookie } from './browser-cookie.js';
import {
  crossSiteError,
  doorAccess,
  hasQueryToken,
  sendSignInForm,
  tokenInUrlError,
  type SignInDoor,
} from './browser-sign-in.js';
import { tokensEqual } from './secrets.js';

export { tokensEqual } from './secrets.js';

/** Exposed to browsers on allowed cross-origin responses (PROTOCOL §2). */
const EXPOSED_HEADERS = 'Retry-After, X-Qwen-Event-Epoch, X-Qwen-SSE-Stream-Id, Acp-Connection-Id';
const ALLOWED_HEADERS =
  'Authorization, Content-Type, X-Qwen-Client-Id, Last-Event-ID, X-Qwen-Event-Epoch, Accept, Cache-Control, Acp-Connection-Id, Acp-Session-Id, Idempotency-Key';
const ALLOWED_METHODS = 'GET, POST, DELETE, OPTIONS';
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/** True for hostnames that only this machine can reach. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname.toLowerCase()) || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/** What the gates need to know about the server. */
export interface SecurityOptions {
  /** The bound hostname (`127.0.0.1`, `::1`, `0.0.0.0`, …). */
  hostname: string;
  /** The bound port, known once the server listens. */
  port: () => number;
  /** What the daemon's own browser origins start with: `https` when it serves TLS; default `http`. */
  scheme?: 'http' | 'https';
  /** The loopback port agent processes reach the gateway on under TLS, once it listens (0 before). */
  agentGatewayPort?: () => number;
  /** Bearer token; undefined = no auth (only allowed on loopback). */
  token: string | undefined;
  /** Demand the token on every route, `/health` included. */
  requireAuth: boolean;
  /** Origins allowed besides the daemon's own loopback origin. */
  allowOrigins: readonly string[];
  /**
   * Per-session credentials, accepted on the model gateway (`/v1/*`) while live, besides the
   * token; a session credential that is not live is refused there even without a token.
   */
  credentials?: GatewayCallerLookup;
  /**
   * The browser pages served (the dashboard, the web client): `?token=` on their pages is refused
   * (400 `token_in_url`) and, with a token, the cookie a door's sign-in sets opens its routes
   * (a change only with this daemon's own Origin), and its page without credentials answers the
   * sign-in form (http/browser-sign-in.ts). `cookie` is present when the daemon has a token.
   */
  doors?: ReadonlyArray<{ door: SignInDoor; cookie: BrowserCookie | undefined }>;
}

/** Methods that change nothing: a cookie opens them without an Origin header. */
const SAFE_METHODS = new Set(['GET', 'HEAD']);

/** Resolves a gateway credential (and, for a shared agent process, the session it names). */
export interface GatewayCallerLookup {
  resolve(token: string, agentSession?: string): GatewayCaller | undefined;
}

/** The bearer token of an `Authorization` header, if it carries one. */
export function bearerToken(header: string | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  return match?.[1];
}

/**
 * The session credential's caller the gate resolved for a gateway request, so the route reads
 * it rather than hashing and looking the credential up a second time.
 */
const gatewayCallers = new WeakMap<FastifyRequest, GatewayCaller>();

/** The live session credential's caller of a gateway request, as the security gate found it. */
export function gatewayCallerOf(request: FastifyRequest): GatewayCaller | undefined {
  return gatewayCallers.get(request);
}

/** Resolves a session credential on a gateway request; true when it is live (and remembered). */
function liveCredential(request: FastifyRequest, given: string, credentials: GatewayCallerLookup): boolean {
  const named = request.headers[AGENT_SESSION_HEADER];
  const caller = credentials.resolve(given, typeof named === 'string' ? named : undefined);
  if (caller === undefined) return false;
  gatewayCallers.set(request, caller);
  return true;
}

/** Whether `url` is on the model gateway (`/v1/…`). */
function isGatewayUrl(url: string): boolean {
  return url.startsWith('/v1/');
}

function hostLiteral(hostname: string): string {
  return hostname.includes(':') && !hostname.startsWith('[') ? `[${hostname}]` : hostname;
}

function unauthorized(reply: FastifyReply): void {
  reply.header('WWW-Authenticate', 'Bearer');
  deny(reply, 401, 'Unauthorized');
}

function deny(reply: FastifyReply, status: number, error: string): void {
  void reply.code(status).header('content-type', 'application/json; charset=utf-8').send({ error });
}

/**
 * The daemon's own `name:port` Hosts and `scheme://name:port` Origins, for every loopback name and
 * the bound one, rebuilt only when a port changes (0 until the server listens) rather than
 * formatted on every request. The agents' gateway listener (TLS only) is a Host too, never an Origin.
 */
class OwnAddresses {
  hosts: ReadonlySet<string> = new Set();
  origins: ReadonlySet<string> = new Set();
  private readonly names: readonly string[];
  private readonly scheme: 'http' | 'https';
  private knownPort = -1;
  private knownAgentPort = -1;

  constructor(
    private readonly options: Pick<SecurityOptions, 'hostname' | 'port' | 'scheme' | 'agentGatewayPort'>,
  ) {
    this.names = ['localhost', '127.0.0.1', '[::1]', hostLiteral(options.hostname).toLowerCase()];
    this.scheme = options.scheme ?? 'http';
  }

  learnPorts(): void {
    const port = this.options.port();
    const agentPort = this.options.agentGatewayPort?.() ?? 0;
    if (port === this.knownPort && agentPort === this.knownAgentPort) return;
    this.knownPort = port;
    this.knownAgentPort = agentPort;
    const ports = agentPort === 0 ? [port] : [port, agentPort];
    this.hosts = new Set(ports.flatMap((p) => this.names.map((name) => `${name}:${p}`)));
    this.origins = new Set(this.names.map((name) => `${this.scheme}://${name}:${port}`));
  }
}

/**
 * What a browser's cookie makes of a request without a valid bearer token: `pass`, the door
 * whose sign-in form to answer, the CSRF refusal of a change that names no Origin, or
 * `undefined` (401).
 */
function browserAccess(
  doors: NonNullable<SecurityOptions['doors']>,
  request: FastifyRequest,
  path: string,
): 'pass' | SignInDoor | Error | undefined {
  for (const { door, cookie } of doors) {
    if (cookie === undefined) continue;
    const access = doorAccess(door, request.method, path, request.headers.cookie, cookie);
    if (access === 'pass') return 'pass';
    if (access === 'sign-in') return door;
    if (access !== 'cookie') continue;
    // CSRF: a change made with a cookie must say where it comes from; the Origin gate let only
    // this daemon's own origin (or an operator's --allow-origin) through.
    return SAFE_METHODS.has(request.method) || request.headers.origin !== undefined
      ? 'pass'
      : crossSiteError();
  }
  return undefined;
}

/**
 * The security gates of PROTOCOL §2, in order: Host allowlist (loopback binds), Origin/CORS
 * (with preflight), bearer token. Runs as the first `onRequest` hook, before any body is read.
 * A callback hook, not an async one: it runs on every request, and a promise per request (and
 * the microtask fastify waits on) is measurable on the paths that must stay cheap (SPEC BP-8).
 * A gate that answers does not call `done`: the request ends with that answer.
 */
export function securityGate(options: SecurityOptions) {
  const loopback = isLoopbackHost(options.hostname);
  const doors = options.doors ?? [];
  const allowOrigins = new Set(
    options.allowOrigins.map((origin) => origin.replace(/\/+$/, '').toLowerCase()),
  );
  const own = new OwnAddresses(options);

  return function gate(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
    own.learnPorts();
    // 1. Host allowlist (DNS-rebinding guard), loopback binds only.
    if (loopback) {
      const host = request.headers.host;
      // Clients send it in lower case: lowering it only when the exact value misses saves a copy.
      if (host === undefined || (!own.hosts.has(host) && !own.hosts.has(host.toLowerCase())))
        return deny(reply, 403, 'Invalid Host header');
    }
    // 2. Origin / CORS.
    const originHeader = request.headers.origin;
    if (originHeader !== undefined) {
      const origin = originHeader.toLowerCase();
      if (!own.origins.has(origin) && !allowOrigins.has(origin))
        return deny(reply, 403, 'Request denied by CORS policy');
      reply.header('Access-Control-Allow-Origin', originHeader);
      reply.header('Vary', 'Origin');
      reply.header('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    }
    if (request.method === 'OPTIONS') {
      reply.header('Access-Control-Allow-Methods', ALLOWED_METHODS);
      reply.header('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      reply.header('Access-Control-Max-Age', '600');
      void reply.code(204).send();
      return;
    }
    // A token in a page's URL stays in history and logs: refused before it is compared.
    const query = request.url.indexOf('?');
    if (query >= 0 && hasQueryToken(request.url)) {
      const door = doors.find(({ door }) => door.owns(request.url.slice(0, query)))?.door;
      if (door !== undefined) return done(tokenInUrlError(door));
    }
    // 3. Bearer token; on the gateway, a live session credential too.
    const token = options.token;
    const credentials = options.credentials;
    if (token === undefined) {
      // Open daemon: only a gateway call naming a session credential is checked (it must be live).
      const header = request.headers.authorization;
      if (header === undefined || credentials === undefined || !isGatewayUrl(request.url)) return done();
      const given = bearerToken(header);
      if (given === undefined || !isSessionCredential(given) || liveCredential(request, given, credentials))
        return done();
      return unauthorized(reply);
    }
    const path = request.url.split('?', 1)[0]!;
    if (path === '/health' && loopback && !options.requireAuth) return done();
    const given = bearerToken(request.headers.authorization);
    if (given !== undefined && tokensEqual(given, token)) return done();
    if (given !== undefined && credentials !== undefined && isGatewayUrl(request.url)) {
      if (isSessionCredential(given) && liveCredential(request, given, credentials)) return done();
    }
    const browser = browserAccess(doors, request, path);
    if (browser === 'pass') return done();
    if (browser instanceof Error) return done(browser);
    if (browser !== undefined) return sendSignInForm(reply, browser);
    unauthorized(reply);
  };
}
