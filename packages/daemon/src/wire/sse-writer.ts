import { SSE_HEARTBEAT_MS } from '@sluice/protocol';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** Default interval of the `: heartbeat` comment (PROTOCOL §6). */
export const DEFAULT_SSE_HEARTBEAT_MS = SSE_HEARTBEAT_MS;

/** Where an SSE response takes its frames from, already formatted as SSE text. */
export interface SseSource {
  /** A frame that is ready now, without waiting (optional fast path). */
  tryNext?(): string | undefined;
  /** The next frame; `undefined` once the source has ended. */
  next(): Promise<string | undefined>;
  /** Stops the source (the response closed or failed). */
  close(): void;
}

/** Options of {@link writeSse}. */
export interface SseWriteOptions {
  heartbeatMs: number;
  /** Headers already set on the reply (CORS) plus the stream's own (`X-Qwen-Event-Epoch`, …). */
  headers: OutgoingHttpHeaders;
  /** Called once when the stream ended, whoever ended it. */
  onEnd?(): void;
}

/**
 * Writes `source` as an SSE response: headers, `retry: 3000`, the frames, a heartbeat comment
 * while idle. Backpressure is explicit: when `write()` returns false nothing more is taken from
 * the source until `drain`, so a slow reader fills its own bounded queue upstream (where the bus
 * warns, then evicts it), never the daemon's memory. Socket close stops the source.
 */
export function writeSse(
  request: IncomingMessage,
  response: ServerResponse,
  source: SseSource,
  options: SseWriteOptions,
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

  let closed = false;
  let resumeWriting: (() => void) | undefined;
  const heartbeat = setInterval(() => {
    if (!closed && resumeWriting === undefined) response.write(': heartbeat\n\n');
  }, options.heartbeatMs);
  heartbeat.unref();

  const stop = (): void => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    source.close();
    const resume = resumeWriting;
    resumeWriting = undefined;
    resume?.();
    options.onEnd?.();
  };
  response.on('close', stop);
  response.on('error', stop);

  const waitForDrain = (): Promise<void> =>
    new Promise((resolve) => {
      const done = (): void => {
        response.off('drain', done);
        resumeWriting = undefined;
        resolve();
      };
      resumeWriting = done;
      response.on('drain', done);
    });

  const pump = async (): Promise<void> => {
    while (!closed) {
      const frame = source.tryNext?.() ?? (await source.next());
      if (frame === undefined || closed) break;
      if (!response.write(frame)) await waitForDrain();
    }
  };

  response.write('retry: 3000\n\n');
  pump().then(
    () => {
      if (closed) return;
      stop();
      response.end();
    },
    () => {
      stop();
      response.destroy();
    },
  );
}
