import type { AnyMessage, Stream } from '@agentclientprotocol/sdk';
import type { AcpDaemon } from './acp-daemon.js';
import type { Subscription } from '../events/index.js';
import { AcpLink } from './acp-link.js';
import { eventToAcpMessage } from './event-translation.js';
import { asJsonRpcMessage, idOf, rpcErrorResponse } from './json-rpc-message.js';
import { OutboundMerger } from './outbound-merger.js';
import { RPC_CODE } from './rpc-errors.js';

/** Default of requests in flight plus unwritten answers on the stdio connection. */
export const DEFAULT_MAX_STDIO_OUTSTANDING = 64;

/** Options of {@link serveAcpStream}. */
export interface AcpStreamServerOptions {
  /** Requests in flight plus answers not yet written; more are answered with an error at once. */
  maxOutstanding?: number;
  log(error: unknown, context: string): void;
}

/** A running ACP connection over one message stream. */
export interface AcpStreamServer {
  /** Resolves once the input ended (or `close()` was called) and the output is flushed. */
  readonly closed: Promise<void>;
  close(): void;
}

/**
 * Serves one ACP connection over a message stream — `sluice acp` passes `ndJsonStream` over
 * stdin/stdout. Same agent as `/acp`; the sessions this connection creates or attaches have
 * their events written into the same stream (`session/update`, `session/request_permission`,
 * `_qwen/notify`), merged ahead of responses so a prompt's answer follows its updates.
 */
export function serveAcpStream(
  daemon: AcpDaemon,
  stream: Stream,
  options: AcpStreamServerOptions,
): AcpStreamServer {
  const maxOutstanding = options.maxOutstanding ?? DEFAULT_MAX_STDIO_OUTSTANDING;
  if (!Number.isSafeInteger(maxOutstanding) || maxOutstanding < 1)
    throw new RangeError(`maxOutstanding must be a positive integer, got ${String(maxOutstanding)}`);
  const out = new OutboundMerger((frame) => eventToAcpMessage(frame, (id) => daemon.permissions.isOpen(id)));
  const subscriptions = new Map<string, Subscription>();
  const link = new AcpLink({
    daemon,
    deliver: (message) => out.push(message),
    onAttach: (sessionId, replay) => {
      const current = subscriptions.get(sessionId);
      if (current !== undefined && !current.ended) {
        // Attached already: only `session/load` needs more, the history again (ACP: load replays
        // the whole conversation). The replay covers what the old subscription had not written.
        if (!replay) return;
        current.close();
      }
      try {
        const bus = daemon.bridge.streams.busFor(sessionId);
        const after = replay ? 0 : bus.lastEventId;
        let following = bus.subscribe(replay ? { lastEventId: 0 } : {});
        subscriptions.set(sessionId, following);
        // stdio has no reconnect: a reader the bus evicted (stdout slower than the events) picks
        // up where it was, from the bus's replay — while the session is still attached.
        out.addSubscription(following, {
          after,
          subscribe: (lastEventId) => {
            if (subscriptions.get(sessionId) !== following) throw new Error('session detached');
            following = bus.subscribe({ lastEventId });
            subscriptions.set(sessionId, following);
            return following;
          },
        });
      } catch (error) {
        options.log(error, `acp stdio subscribe ${sessionId}`);
      }
    },
    onDetach: (sessionId) => subscriptions.delete(sessionId),
    log: options.log,
  });

  const reader = stream.readable.getReader();
  const close = (): void => {
    link.close();
    out.close();
    // Stops waiting for input (SIGTERM while the client keeps stdin open).
    reader.cancel().catch(() => {});
  };

  const write = async (): Promise<void> => {
    const writer = stream.writable.getWriter();
    try {
      for (let item = await out.next(); item !== undefined; item = await out.next())
        await writer.write(item.message);
    } finally {
      writer.releaseLock();
    }
  };

  const read = async (): Promise<void> => {
    try {
      for (let step = await reader.read(); !step.done; step = await reader.read()) {
        const message = asJsonRpcMessage(step.value);
        if (message === undefined) {
          out.push(
            rpcErrorResponse(idOf(step.value), RPC_CODE.invalidRequest, 'Invalid Request') as AnyMessage,
          );
          continue;
        }
        if ('method' in message && 'id' in message && link.isPending(message.id)) {
          out.push(
            rpcErrorResponse(
              message.id,
              RPC_CODE.invalidRequest,
              'A request with this id is still unanswered',
              {
                errorKind: 'acp_duplicate_request_id',
              },
            ) as AnyMessage,
          );
          continue;
        }
        if ('method' in message && 'id' in message && link.pendingRequests + out.queued >= maxOutstanding) {
          out.push(
            rpcErrorResponse(message.id, RPC_CODE.internalError, 'Too many requests in flight; retry later', {
              errorKind: 'acp_too_many_requests',
              limit: maxOutstanding,
            }) as AnyMessage,
          );
          continue;
        }
        link.receive(message);
      }
    } finally {
      reader.releaseLock();
    }
  };

  const writing = write().catch((error: unknown) => options.log(error, 'acp stdio write'));
  const closed = read()
    .catch((error: unknown) => options.log(error, 'acp stdio read'))
    .then(() => close())
    .then(() => writing);
  return { closed, close };
}
