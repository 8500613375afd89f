import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** A loopback reverse proxy that counts the requests reaching the daemon behind it. */
export interface CountingProxy {
  readonly url: string;
  /** `METHOD path` of every request forwarded so far. */
  readonly seen: string[];
  /** `METHOD path status` of every answer the daemon has started (SSE: once subscribed). */
  readonly answered: string[];
  close(): Promise<void>;
}

/**
 * Answers a request itself instead of forwarding it (to force a failure the daemon cannot be
 * brought to on cue); return `false` to forward.
 */
export type ProxyIntercept = (req: IncomingMessage, res: ServerResponse) => boolean;

/** Forwards every request to `target` (streams included) and records it. */
export async function startCountingProxy(
  target: string,
  intercept: ProxyIntercept = () => false,
): Promise<CountingProxy> {
  const upstream = new URL(target);
  const seen: string[] = [];
  const answered: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    if (intercept(req, res)) return void req.resume();
    const forward = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
        agent: false,
      },
      (answer) => {
        answered.push(`${req.method} ${req.url} ${answer.statusCode}`);
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    res.on('close', () => forward.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    answered,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
