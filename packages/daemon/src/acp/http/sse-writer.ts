import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { writeSse } from '../../wire/index.js';
import type { OutboundMerger } from '../outbound-merger.js';

/** Options of {@link writeAcpSse}. */
export interface AcpSseOptions {
  heartbeatMs: number;
  /** Headers already set on the reply (CORS) plus any of the stream's own (`X-Qwen-Event-Epoch`). */
  headers: OutgoingHttpHeaders;
  /** Called once when the stream ended, whoever ended it. */
  onEnd(): void;
  /**
   * The merger outlives this reader (the connection stream, which a client may reopen): the end
   * of the response only detaches the reader instead of closing the merger.
   */
  keepOpen?: boolean;
}

/**
 * Writes an ACP stream as SSE (PROTOCOL §8): `id: <n>` for bus events, one `data: <JSON-RPC
 * message>` line per frame, with the same backpressure as every SSE stream of the daemon.
 */
export function writeAcpSse(
  request: IncomingMessage,
  response: ServerResponse,
  merger: OutboundMerger,
  options: AcpSseOptions,
): void {
  let ended = false;
  writeSse(
    request,
    response,
    {
      next: async () => {
        const item = await merger.next(() => ended);
        if (item === undefined) return undefined;
        const idLine = item.eventId === undefined ? '' : `id: ${item.eventId}\n`;
        return `${idLine}data: ${JSON.stringify(item.message)}\n\n`;
      },
      close: () => {
        ended = true;
        if (options.keepOpen === true) merger.poke();
        else merger.close();
      },
    },
    options,
  );
}
