import { randomUUID } from 'node:crypto';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { formatSseFrame, type Subscription } from '../events/index.js';

/** Default interval of the `: heartbeat` comment (PROTOCOL §6). */
export const DEFAULT_SSE_HEARTBEAT_MS = 15_000;

/** Options of {@link streamSubscription}. */
export interface SseStreamOptions {
  epoch: string;
  heartbeatMs: number;
  /** Headers already set on the reply (CORS), kept on the raw response. */
  headers: OutgoingHttpHeaders;
}

/**
 * Writes a subscription to an SSE response: headers, `retry: 3000`, then one frame per
 * event. Backpressure is explicit: when `write()` returns false nothing more is read from
 * the subscription until `drain`, so a slow reader fills its own bounded queue (and is warned,
 * then evicted by the bus), never the daemon's memory. Socket close ends the subscription.
 */
export function streamSubscription(
  request: IncomingMessage,
  response: ServerResponse,
  subscription: Subscription,
  options: SseStreamOptions,
): void {
  response.writeHead(200, {
    ...options.headers,
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
    'X-Qwen-Event-Epoch': options.epoch,
    'X-Qwen-SSE-Stream-Id': randomUUID(),
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
    subscription.close();
    const resume = resumeWriting;
    resumeWriting = undefined;
    resume?.();
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
      let frame = subscription.tryRead();
      if (frame === undefined) {
        if (subscription.ended) break;
        const step = await subscription.next();
        if (step.done) break;
        frame = step.value;
      }
      if (closed) break;
      if (!response.write(formatSseFrame(frame))) await waitForDrain();
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
