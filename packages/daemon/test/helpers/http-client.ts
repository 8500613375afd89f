import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';

/** A response with its parsed JSON body (or the raw text when it is not JSON). */
export interface ApiResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}

/** Options of {@link api}. */
export interface ApiOptions {
  body?: unknown;
  /** Sent verbatim instead of `JSON.stringify(body)`. */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** Declares this Content-Length but sends only `rawBody` and never ends the request (413 tests). */
  declaredLength?: number;
  /** An event stream is answered by its status and headers, then closed (it never ends by itself). */
  streamHead?: boolean;
  /** The local address to connect from (`127.0.0.2`: another client of a loopback daemon). */
  localAddress?: string;
}

/** One HTTP request over node:http (so Host/Origin headers are sent exactly as given). */
export function api(
  baseUrl: string,
  method: string,
  path: string,
  options: ApiOptions = {},
): Promise<ApiResponse> {
  const url = new URL(path, baseUrl);
  const payload =
    options.rawBody ?? (options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body)));
  const headers: Record<string, string> = { ...options.headers };
  if (payload !== undefined) {
    headers['content-type'] ??= 'application/json';
    headers['content-length'] = String(options.declaredLength ?? Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const from = options.localAddress === undefined ? {} : { localAddress: options.localAddress };
    const req = httpRequest(url, { method, headers, agent: false, ...from }, (res) => {
      if (options.streamHead === true && isEventStream(res)) {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: undefined, text: '' });
        req.destroy();
        return;
      }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        if (options.declaredLength !== undefined) req.destroy();
        let body: unknown = text;
        try {
          body = text.length > 0 ? JSON.parse(text) : undefined;
        } catch {
          /* not JSON */
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
      });
    });
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    if (options.declaredLength === undefined) req.end();
  });
}

function isEventStream(res: IncomingMessage): boolean {
  return String(res.headers['content-type']).startsWith('text/event-stream');
}

/** One parsed SSE frame. */
export interface SseFrame {
  id?: number;
  event: string;
  data: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** An open `GET /session/:id/events` stream. */
export interface EventStream {
  status: number;
  headers: IncomingHttpHeaders;
  /** Every frame received so far. */
  frames: SseFrame[];
  /** Raw text received so far. */
  raw(): string;
  /** Resolves with the first frame (from the start of the stream) matching `predicate`. */
  waitFor(predicate: (frame: SseFrame) => boolean, timeoutMs?: number): Promise<SseFrame>;
  /** Resolves once the server ended the stream. */
  ended: Promise<void>;
  close(): void;
  /** Starts reading a stream opened with `paused: true` (a no-op otherwise). */
  resume(): void;
}

/** Opens an SSE stream; rejects with the JSON error body when the server refuses it. */
export function openEvents(
  baseUrl: string,
  sessionId: string,
  options: {
    headers?: Record<string, string>;
    query?: string;
    /** Read nothing until `resume()`: a reader that stalls, so TCP pushes back on the daemon. */
    paused?: boolean;
  } = {},
): Promise<EventStream> {
  const url = new URL(`/session/${encodeURIComponent(sessionId)}/events${options.query ?? ''}`, baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      headers: { accept: 'text/event-stream', ...options.headers },
      agent: false,
    });
    req.on('error', reject);
    req.on('response', (res: IncomingMessage) => {
      if (res.statusCode !== 200) {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () =>
          reject(
            Object.assign(new Error(`HTTP ${res.statusCode}: ${text}`), {
              status: res.statusCode,
              body: text,
            }),
          ),
        );
        return;
      }
      const frames: SseFrame[] = [];
      const waiters = new Set<() => void>();
      let raw = '';
      let buffer = '';
      res.setEncoding('utf8');
      const onData = (chunk: string): void => {
        raw += chunk;
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const frame: Partial<SseFrame> = {};
          let data: string | undefined;
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) frame.id = Number(line.slice(4));
            else if (line.startsWith('event: ')) frame.event = line.slice(7);
            else if (line.startsWith('data: ')) data = line.slice(6);
          }
          if (frame.event === undefined || data === undefined) continue;
          frames.push({ ...frame, data: JSON.parse(data) } as SseFrame);
        }
        for (const wake of [...waiters]) wake();
      };
      let reading = options.paused !== true;
      if (reading) res.on('data', onData);
      const ended = new Promise<void>((resolveEnd) => {
        res.on('end', () => resolveEnd());
        res.on('close', () => resolveEnd());
      });
      void ended.then(() => {
        for (const wake of [...waiters]) wake();
      });
      let done = false;
      void ended.then(() => (done = true));
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        frames,
        raw: () => raw,
        ended,
        close: () => req.destroy(),
        resume: () => {
          if (reading) return;
          reading = true;
          res.on('data', onData);
        },
        waitFor: (predicate, timeoutMs = 10_000) =>
          new Promise<SseFrame>((resolveFrame, rejectFrame) => {
            const check = (): void => {
              const found = frames.find(predicate);
              if (found) {
                finish();
                resolveFrame(found);
              } else if (done) {
                finish();
                rejectFrame(
                  new Error(
                    `stream ended without the expected frame; got ${frames.map((f) => f.event).join(', ')}`,
                  ),
                );
              }
            };
            const timer = setTimeout(() => {
              finish();
              rejectFrame(
                new Error(`timed out waiting for a frame; got ${frames.map((f) => f.event).join(', ')}`),
              );
            }, timeoutMs);
            const finish = (): void => {
              clearTimeout(timer);
              waiters.delete(check);
            };
            waiters.add(check);
            check();
          }),
      });
    });
    req.end();
  });
}

/** A one-block text prompt body. */
export function textPrompt(text: string): { prompt: Array<{ type: 'text'; text: string }> } {
  return { prompt: [{ type: 'text', text }] };
}
