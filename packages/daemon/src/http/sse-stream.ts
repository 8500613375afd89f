import { randomUUID } from 'node:crypto';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { formatSseFrame, type Subscription } from '../events/index.js';
import { writeSse } from '../wire/index.js';

/** Options of {@link streamSubscription}. */
export interface SseStreamOptions {
  epoch: string;
  heartbeatMs: number;
  /** Headers already set on the reply (CORS), kept on the raw response. */
  headers: OutgoingHttpHeaders;
}

/** Writes a bus subscription as the session's SSE stream (PROTOCOL §6), one frame per event. */
export function streamSubscription(
  request: IncomingMessage,
  response: ServerResponse,
  subscription: Subscription,
  options: SseStreamOptions,
): void {
  writeSse(
    request,
    response,
    {
      tryNext: () => {
        const frame = subscription.tryRead();
        return frame === undefined ? undefined : formatSseFrame(frame);
      },
      next: async () => {
        const step = await subscription.next();
        return step.done ? undefined : formatSseFrame(step.value);
      },
      close: () => subscription.close(),
    },
    {
      heartbeatMs: options.heartbeatMs,
      headers: {
        ...options.headers,
        'X-Qwen-Event-Epoch': options.epoch,
        'X-Qwen-SSE-Stream-Id': randomUUID(),
      },
    },
  );
}
