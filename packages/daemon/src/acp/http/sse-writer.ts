import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { OutboundMerger } from '../outbound-merger.js';

/** Options of {@link writeAcpSse}. */
export interface AcpSseOptions {
  heartbeatMs: number;
  /** Headers already set on the reply (CORS) plus any of the stream's own (`X-Qwen-Event-Epoch`). */
  headers: OutgoingHttpHeaders;
  /** Called once when the stream ended, whoever ended it. */
  onEnd(): void;
}

/**
 * Writes an ACP stream as SSE (PROTOCOL §8): `id: <n>` for bus events, one `data: <JSON-RPC
 * message>` line per frame. Backpressure is explicit — while the socket is full nothing more is
 * taken from the merger, so a slow reader fills the bus's bounded queue (and is evicted there),
 * never the daemon's memory.
 */
export function writeAcpSse(
  request: IncomingMessage,
  response: ServerResponse,
  merger: OutboundMerger,
  options: AcpSseOptions,
): void {
  response.writeHead(200, {
    ...options.headers,
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  request.socket.setTimeout(0);
  request.socket.setNoDelay(true);

  let ended = false;
  let draining: (() => void) | undefined;
  const heartbeat = setInterval(() => {
    if (!ended && draining === undefined) response.write(': heartbeat\n\n');
  }, options.heartbeatMs);
  heartbeat.unref();

  const end = (): void => {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    merger.close();
    draining?.();
    draining = undefined;
    options.onEnd();
  };
  response.on('close', end);
  response.on('error', end);

  const pump = async (): Promise<void> => {
    response.write('retry: 3000\n\n');
    for (;;) {
      const item = await merger.next();
      if (item === undefined || ended) return;
      const idLine = item.eventId === undefined ? '' : `id: ${item.eventId}\n`;
      if (!response.write(`${idLine}data: ${JSON.stringify(item.message)}\n\n`))
        await new Promise<void>((resolve) => {
          const done = (): void => {
            response.off('drain', done);
            draining = undefined;
            resolve();
          };
          draining = done;
          response.on('drain', done);
        });
    }
  };
  pump().then(
    () => {
      if (ended) return;
      end();
      response.end();
    },
    () => {
      end();
      response.destroy();
    },
  );
}
