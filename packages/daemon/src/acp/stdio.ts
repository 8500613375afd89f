import type { AnyMessage, Stream } from '@agentclientprotocol/sdk';
import type { AcpDaemon } from './acp-daemon.js';
import type { Subscription } from '../events/index.js';
import { AcpLink } from './acp-link.js';
import { AcpEventTranslator } from './event-translation.js';
import { asJsonRpcMessage, idOf, rpcErrorResponse } from './json-rpc-message.js';
import { positiveInteger } from '../validate.js';
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
  const maxOutstanding = positiveInteger(
    'maxOutstanding',
    options.maxOutstanding ?? DEFAULT_MAX_STDIO_OUTSTANDING,
  );
  const translator = new AcpEventTranslator((id) => daemon.permissions.isOpen(id));
  const out = new OutboundMerger(translator.translate);
  const streams = new StdioSessionStreams(daemon, out, options.log);
  const link = new AcpLink({
    daemon,
    deliver: (message) => out.push(message),
    onAttach: (sessionId, replay) => streams.attach(sessionId, replay),
    onDetach: (sessionId) => streams.detach(sessionId),
    onPermissionAnswer: (requestId) => translator.answered(requestId),
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
        const refusal =
          message === undefined
            ? rpcErrorResponse(idOf(step.value), RPC_CODE.invalidRequest, 'Invalid Request')
            : refusalOf(message, link, out.queued, maxOutstanding);
        if (refusal !== undefined) out.push(refusal as AnyMessage);
        else if (message !== undefined) link.receive(message);
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

/** The answer to a request refused before it reaches the agent: a reused id, or too many in flight. */
function refusalOf(message: AnyMessage, link: AcpLink, unwritten: number, maxOutstanding: number): unknown {
  if (!('method' in message && 'id' in message)) return undefined;
  if (link.isPending(message.id))
    return rpcErrorResponse(
      message.id,
      RPC_CODE.invalidRequest,
      'A request with this id is still unanswered',
      {
        errorKind: 'acp_duplicate_request_id',
      },
    );
  if (link.pendingRequests + unwritten >= maxOutstanding)
    return rpcErrorResponse(message.id, RPC_CODE.internalError, 'Too many requests in flight; retry later', {
      errorKind: 'acp_too_many_requests',
      limit: maxOutstanding,
    });
  return undefined;
}

/** The sessions attached on one stdio connection, each read from its event stream into the output. */
class StdioSessionStreams {
  private readonly subscriptions = new Map<string, Subscription>();

  constructor(
    private readonly daemon: AcpDaemon,
    private readonly out: OutboundMerger,
    private readonly log: (error: unknown, context: string) => void,
  ) {}

  attach(sessionId: string, replay: boolean): void {
    const current = this.subscriptions.get(sessionId);
    // Attached already: only `session/load` needs more, the history again (ACP: load replays the
    // whole conversation). The replay covers what the old subscription had not written.
    if (current !== undefined && !current.ended && !replay) return;
    try {
      const bus = this.daemon.bridge.streams.busFor(sessionId);
      const after = replay ? 0 : bus.lastEventId;
      let following = bus.subscribe(replay ? { lastEventId: 0 } : {});
      this.subscriptions.set(sessionId, following);
      // stdio has no reconnect: a reader the bus evicted (stdout slower than the events) picks
      // up where it was, from the bus's replay — while the session is still attached.
      const resume = {
        after,
        subscribe: (lastEventId: number) => {
          if (this.subscriptions.get(sessionId) !== following) throw new Error('session detached');
          following = bus.subscribe({ lastEventId });
          this.subscriptions.set(sessionId, following);
          return following;
        },
      };
      if (current === undefined) this.out.addSubscription(following, resume);
      else this.out.replaceOne(current, following, resume);
    } catch (error) {
      this.log(error, `acp stdio subscribe ${sessionId}`);
    }
  }

  detach(sessionId: string): void {
    this.subscriptions.delete(sessionId);
  }
}
