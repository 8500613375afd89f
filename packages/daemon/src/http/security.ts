import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Exposed to browsers on allowed cross-origin responses (PROTOCOL §2). */
const EXPOSED_HEADERS = 'Retry-After, X-Qwen-Event-Epoch, X-Qwen-SSE-Stream-Id, Acp-Connection-Id';
const ALLOWED_HEADERS =
  'Authorization, Content-Type, X-Qwen-Client-Id, Last-Event-ID, X-Qwen-Event-Epoch, Accept, Cache-Control, Acp-Connection-Id, Acp-Session-Id';
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
  /** Bearer token; undefined = no auth (only allowed on loopback). */
  token: string | undefined;
  /** Demand the token on every route, `/health` included. */
  requireAuth: boolean;
  /** Origins allowed besides the daemon's own loopback origin. */
  allowOrigins: readonly string[];
}

function hostLiteral(hostname: string): string {
  return hostname.includes(':') && !hostname.startsWith('[') ? `[${hostname}]` : hostname;
}

/** Compares two secrets in constant time (hashing first gives equal-length buffers). */
export function tokensEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

function deny(reply: FastifyReply, status: number, error: string): FastifyReply {
  return reply.code(status).header('content-type', 'application/json; charset=utf-8').send({ error });
}

/**
 * The security gates of PROTOCOL §2, in order: Host allowlist (loopback binds), Origin/CORS
 * (with preflight), bearer token. Runs as the first `onRequest` hook, before any body is read.
 */
export function securityGate(options: SecurityOptions) {
  const loopback = isLoopbackHost(options.hostname);
  const allowOrigins = new Set(
    options.allowOrigins.map((origin) => origin.replace(/\/+$/, '').toLowerCase()),
  );
  const bound = hostLiteral(options.hostname).toLowerCase();

  const hostAllowed = (host: string | undefined): boolean => {
    if (host === undefined) return false;
    const port = options.port();
    const value = host.toLowerCase();
    for (const name of ['localhost', '127.0.0.1', '[::1]', bound])
      if (value === `${name}:${port}`) return true;
    return false;
  };

  const ownOrigin = (origin: string): boolean => {
    const port = options.port();
    for (const name of ['localhost', '127.0.0.1', '[::1]', bound])
      if (origin === `http://${name}:${port}`) return true;
    return false;
  };

  return async function gate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    // 1. Host allowlist (DNS-rebinding guard), loopback binds only.
    if (loopback && !hostAllowed(request.headers.host)) {
      await deny(reply, 403, 'Invalid Host header');
      return;
    }
    // 2. Origin / CORS.
    const originHeader = request.headers.origin;
    if (originHeader !== undefined) {
      const origin = originHeader.toLowerCase();
      if (!ownOrigin(origin) && !allowOrigins.has(origin)) {
        await deny(reply, 403, 'Request denied by CORS policy');
        return;
      }
      reply.header('Access-Control-Allow-Origin', originHeader);
      reply.header('Vary', 'Origin');
      reply.header('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    }
    if (request.method === 'OPTIONS') {
      reply.header('Access-Control-Allow-Methods', ALLOWED_METHODS);
      reply.header('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      reply.header('Access-Control-Max-Age', '600');
      await reply.code(204).send();
      return;
    }
    // 3. Bearer token.
    const token = options.token;
    if (token === undefined) return;
    const path = request.url.split('?', 1)[0];
    if (path === '/health' && loopback && !options.requireAuth) return;
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(.+)$/i.exec(header.trim()) : null;
    if (!match || !tokensEqual(match[1] ?? '', token)) {
      reply.header('WWW-Authenticate', 'Bearer');
      await deny(reply, 401, 'Unauthorized');
    }
  };
}
