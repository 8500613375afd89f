import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the scripted server received, body read in full. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** Answers one request; may leave `res` open (held) or destroy the socket. */
export type ScriptHandler = (request: RecordedRequest, res: ServerResponse) => void | Promise<void>;

/** A real `node:http` server on loopback whose answers a test scripts. */
export interface ScriptServer {
  readonly url: string;
  readonly requests: RecordedRequest[];
  handle(handler: ScriptHandler): void;
  close(): Promise<void>;
}

/** Starts a loopback server; every request is recorded, then passed to the current handler. */
export async function startScriptServer(handler: ScriptHandler = notFound): Promise<ScriptServer> {
  let current = handler;
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      void Promise.resolve(current(recorded, res)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    handle: (next) => (current = next),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** 404 JSON like the daemon's unknown route. */
export function notFound(request: RecordedRequest, res: ServerResponse): void {
  json(res, 404, { error: `Route ${request.method} ${request.url} not found` });
}

/** Writes a JSON answer. */
export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** Opens an SSE answer with the daemon's headers. */
export function openSse(res: ServerResponse, epoch = 'epoch-1'): void {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache',
    'X-Qwen-Event-Epoch': epoch,
  });
  res.write('retry: 3000\n\n');
}

/** Writes one event frame; `id` undefined makes a synthetic frame. */
export function sendEvent(
  res: ServerResponse,
  type: string,
  data: Record<string, unknown>,
  id?: number,
  promptId?: string,
): void {
  const envelope = {
    ...(id === undefined ? {} : { id }),
    v: 1,
    type,
    data,
    ...(promptId ? { promptId } : {}),
    _meta: { serverTimestamp: 0 },
  };
  res.write(`${id === undefined ? '' : `id: ${id}\n`}event: ${type}\ndata: ${JSON.stringify(envelope)}\n\n`);
}

/** The text of a `{prompt:[{type:'text',text}]}` body. */
export function promptTextOf(request: RecordedRequest): string {
  const body = JSON.parse(request.body) as { prompt: Array<{ text?: string }> };
  return body.prompt[0]?.text ?? '';
}

/** A one-block text prompt. */
export function text(value: string): { prompt: Array<{ type: 'text'; text: string }> } {
  return { prompt: [{ type: 'text', text: value }] };
}

export { until } from '../../../daemon/test/helpers/until.js';
