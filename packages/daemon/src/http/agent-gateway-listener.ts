import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { serverBounds } from './server.js';

/** Where, under TLS, the daemon's own agent processes call the model gateway. */
export interface AgentGatewayListener {
  /** The loopback port it listens on. */
  readonly port: number;
  /** The gateway's base URL for agent processes: `http://127.0.0.1:<port>/v1`. */
  readonly url: string;
  /** Stops listening and closes its connections. */
  close(): Promise<void>;
}

/** Options of {@link listenAgentGateway}: the bounds of the daemon's own server. */
export interface AgentGatewayListenerOptions {
  requestTimeoutMs: number;
  maxConnections: number;
}

const NOT_HERE = JSON.stringify({
  error: 'This port serves only the model gateway (/v1/) to the daemon’s agent processes; use the HTTPS port',
});

/**
 * A plain-HTTP listener on 127.0.0.1 that hands `/v1/…` requests to `app`'s routes (same gates:
 * the token or a live session credential) and answers 404 to any other path. Under TLS the
 * daemon's agent processes call the gateway here, so that an agent in any language reaches it
 * whatever names the certificate carries and whichever CAs the agent trusts (docs/decisions/034).
 * The traffic never leaves the machine.
 */
export async function listenAgentGateway(
  app: FastifyInstance,
  options: AgentGatewayListenerOptions,
): Promise<AgentGatewayListener> {
  await app.ready();
  const server = createServer(serverBounds(options.requestTimeoutMs), (request, response) => {
    if (request.url?.startsWith('/v1/') === true) return app.routing(request, response);
    response.writeHead(404, { 'content-type': 'application/json; charset=utf-8' }).end(NOT_HERE);
  });
  server.requestTimeout = options.requestTimeoutMs;
  server.maxConnections = options.maxConnections;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
