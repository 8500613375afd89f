import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import * as acp from '@agentclientprotocol/sdk';
import { createHttpStream } from '@agentclientprotocol/sdk/experimental/http-client';
import { api } from './http-client.js';

/** One frame of an ACP SSE stream: the bus event id (when it came from the bus) and the JSON-RPC message. */
export interface AcpFrame {
  id?: number;
  message: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** An open `GET /acp` stream read over node:http. */
export interface AcpStream {
  status: number;
  headers: IncomingHttpHeaders;
  frames: AcpFrame[];
  waitFor(predicate: (frame: AcpFrame) => boolean, timeoutMs?: number): Promise<AcpFrame>;
  ended: Promise<void>;
  close(): void;
}

/** Opens `GET /acp` with the given headers; resolves once the response headers arrived. */
export function openAcpStream(baseUrl: string, headers: Record<string, string>): Promise<AcpStream> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL('/acp', baseUrl), {
      headers: { accept: 'text/event-stream', ...headers },
      agent: false,
    });
    req.on('error', reject);
    req.on('response', (res) => {
      const frames: AcpFrame[] = [];
      const waiters = new Set<() => void>();
      let buffer = '';
      let done = false;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const frame: Partial<AcpFrame> = {};
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) frame.id = Number(line.slice(4));
            else if (line.startsWith('data: ')) frame.message = JSON.parse(line.slice(6));
          }
          if (frame.message !== undefined) frames.push(frame as AcpFrame);
        }
        for (const wake of [...waiters]) wake();
      });
      const ended = new Promise<void>((resolveEnd) => {
        res.on('end', resolveEnd);
        res.on('close', resolveEnd);
      });
      void ended.then(() => {
        done = true;
        for (const wake of [...waiters]) wake();
      });
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        frames,
        ended,
        close: () => req.destroy(),
        waitFor: (predicate, timeoutMs = 10_000) =>
          new Promise((resolveFrame, rejectFrame) => {
            const finish = (): void => {
              clearTimeout(timer);
              waiters.delete(check);
            };
            const check = (): void => {
              const found = frames.find(predicate);
              if (found) {
                finish();
                resolveFrame(found);
              } else if (done) {
                finish();
                rejectFrame(new Error(`stream ended; got ${JSON.stringify(frames.map((f) => f.message))}`));
              }
            };
            const timer = setTimeout(() => {
              finish();
              rejectFrame(new Error(`timed out; got ${JSON.stringify(frames.map((f) => f.message))}`));
            }, timeoutMs);
            waiters.add(check);
            check();
          }),
      });
    });
    req.end();
  });
}

/** What a test ACP client saw. */
export interface AcpClientLog {
  /** `session/update` params, in arrival order. */
  updates: acp.SessionNotification[];
  /** `_qwen/notify` params. */
  notifications: Array<{ kind: string; data: unknown }>;
}

/**
 * The ACP SDK's own client (`acp.client()`) over the SDK's HTTP transport — a real client of
 * `/acp`. `onPermission` answers `session/request_permission` (default: cancelled).
 */
export function connectAcpHttp(
  baseUrl: string,
  options: {
    headers?: Record<string, string>;
    onPermission?: (request: acp.RequestPermissionRequest) => acp.RequestPermissionResponse;
  } = {},
): { connection: acp.ClientConnection; log: AcpClientLog } {
  const log: AcpClientLog = { updates: [], notifications: [] };
  const connection = clientApp(log, options.onPermission).connect(
    createHttpStream(`${baseUrl}/acp`, options.headers === undefined ? {} : { headers: options.headers }),
  );
  return { connection, log };
}

/** A client app recording what it is sent; used over HTTP and over stdio. */
export function clientApp(
  log: AcpClientLog,
  onPermission: (request: acp.RequestPermissionRequest) => acp.RequestPermissionResponse = () => ({
    outcome: { outcome: 'cancelled' },
  }),
): acp.ClientApp {
  return acp
    .client({ name: 'sluice-test' })
    .onNotification('session/update', ({ params }) => {
      log.updates.push(params);
    })
    .onNotification(
      '_qwen/notify',
      (raw: unknown) => raw as { kind: string; data: unknown },
      ({ params }) => {
        log.notifications.push(params);
      },
    )
    .onRequest('session/request_permission', ({ params }) => onPermission(params));
}

/** The `initialize` every test client sends. */
export const INITIALIZE: acp.InitializeRequest = { protocolVersion: 1, clientCapabilities: {} };

/** Opens an ACP-over-HTTP connection with `initialize` (`POST /acp`); resolves with its `Acp-Connection-Id`. */
export async function initializeAcpConnection(baseUrl: string): Promise<string> {
  const init = await api(baseUrl, 'POST', '/acp', {
    body: { jsonrpc: '2.0', id: 0, method: 'initialize', params: INITIALIZE },
  });
  return String(init.headers['acp-connection-id']);
}
