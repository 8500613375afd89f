import { randomUUID } from 'node:crypto';
import type { AnyMessage } from '@agentclientprotocol/sdk';
import type { AcpDaemon } from '../acp-daemon.js';
import type { SubscribeOptions } from '../../events/index.js';
import { LinkedQueue } from '@sluice/runtime/queue';
import { AcpLink, type AcpRoute } from '../acp-link.js';
import { AcpEventTranslator } from '../event-translation.js';
import { OutboundMerger } from '../outbound-merger.js';

/** Limits of one ACP-over-HTTP connection. */
export interface AcpHttpConnectionLimits {
  /** Requests in flight plus answers not yet read; more POSTs get `429`. */
  maxOutstanding: number;
  /** Session streams open at once on this connection. */
  maxSessionStreams: number;
}

interface SessionStream {
  readonly merger: OutboundMerger;
  /** Where the subscription starts once the session is attached (pending streams only). */
  readonly subscribeOptions: SubscribeOptions;
}

/**
 * One ACP connection over HTTP (PROTOCOL §8): its {@link AcpLink}, the connection stream's
 * outbound queue, and the session streams (`GET /acp` with `Acp-Session-Id`), each a bus
 * subscription merged with the responses routed to that session. A session stream opened
 * before its session is live (the client opens it before `session/load`) starts once this
 * connection attaches the session. The answer to a turn or setting request (see {@link AcpRoute})
 * whose session has no open stream waits for the next one, as in the reference daemon (the
 * official client reads `session/prompt` answers only there, and opens that stream after
 * posting the request); other answers fall back to the connection stream.
 */
export class AcpHttpConnection {
  readonly id = randomUUID();
  readonly link: AcpLink;
  /**
   * Requests are answered in the `POST` response (`200`) instead of on a stream: set for the
   * official qwen client, which drops a stream answer that arrives before the `202` (PROTOCOL §8).
   */
  answersInline = false;
  private readonly connectionOut: OutboundMerger;
  private readonly sessionStreams = new Map<string, SessionStream>();
  /** Session-routed answers waiting for their session's stream to open. */
  private readonly parked = new Map<string, LinkedQueue<AnyMessage>>();
  /** Answers that must reach their session's stream (they wait for it rather than fall back). */
  private readonly mustReachSession = new WeakSet<AnyMessage>();
  private connectionStreamOpen = false;
  private lastActive = Date.now();
  private closed = false;

  constructor(
    private readonly daemon: AcpDaemon,
    private readonly limits: AcpHttpConnectionLimits,
    log: (error: unknown, context: string) => void,
  ) {
    this.connectionOut = new OutboundMerger(this.translate);
    this.link = new AcpLink({
      daemon,
      deliver: (message, route, sessionId) => this.deliver(message, route, sessionId),
      onAttach: (sessionId, replay) => this.onAttach(sessionId, replay),
      onDetach: () => {},
      onPermissionAnswer: (requestId) => this.translator.answered(requestId),
      log,
    });
  }

  /** Requests in flight plus answers waiting for a reader. */
  get outstanding(): number {
    let queued = this.connectionOut.queued;
    for (const stream of this.sessionStreams.values()) queued += stream.merger.queued;
    for (const waiting of this.parked.values()) queued += waiting.size;
    return this.link.pendingRequests + queued;
  }

  get atCapacity(): boolean {
    return this.outstanding >= this.limits.maxOutstanding;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Milliseconds since the last request while no stream is open; 0 while one is. */
  idleFor(now: number): number {
    return this.connectionStreamOpen || this.sessionStreams.size > 0 ? 0 : now - this.lastActive;
  }

  touch(): void {
    this.lastActive = Date.now();
  }

  /** The connection stream's outbound queue, or `undefined` while another reader holds it. */
  takeConnectionStream(): OutboundMerger | undefined {
    if (this.connectionStreamOpen || this.closed) return undefined;
    this.connectionStreamOpen = true;
    return this.connectionOut;
  }

  releaseConnectionStream(): void {
    this.connectionStreamOpen = false;
    this.touch();
  }

  /**
   * Opens the session's stream (a reconnect replaces the previous one): subscribed now when the
   * session is live, else once this connection attaches it. Throws what `subscribe` throws
   * (`invalid_max_queued`, `subscriber_limit_exceeded`) or `null` past `maxSessionStreams`.
   */
  openSessionStream(
    sessionId: string,
    options: SubscribeOptions,
  ): { merger: OutboundMerger; epoch?: string } | null {
    const previous = this.sessionStreams.get(sessionId);
    if (previous === undefined && this.sessionStreams.size >= this.limits.maxSessionStreams) return null;
    const merger = new OutboundMerger(this.translate, () => this.link.pendingFor(sessionId) === 0);
    let epoch: string | undefined;
    if (this.daemon.bridge.isOpen(sessionId)) {
      const bus = this.daemon.bridge.streams.busFor(sessionId);
      merger.addSubscription(bus.subscribe(options));
      epoch = bus.epoch;
    }
    if (previous !== undefined) {
      for (const message of previous.merger.drainDirect()) merger.push(message);
      previous.merger.close();
    }
    const waiting = this.parked.get(sessionId);
    this.parked.delete(sessionId);
    for (let message = waiting?.dequeue(); message !== undefined; message = waiting?.dequeue())
      merger.push(message);
    this.sessionStreams.set(sessionId, { merger, subscribeOptions: options });
    this.touch();
    return epoch === undefined ? { merger } : { merger, epoch };
  }

  /**
   * The session stream ended: answers nobody read wait for the session's next stream if they
   * must reach it, else go to the connection stream.
   */
  releaseSessionStream(sessionId: string, merger: OutboundMerger): void {
    const stream = this.sessionStreams.get(sessionId);
    if (stream?.merger !== merger) return;
    this.sessionStreams.delete(sessionId);
    for (const message of merger.drainDirect())
      if (this.mustReachSession.has(message)) this.park(sessionId, message);
      else this.connectionOut.push(message);
    this.touch();
  }

  /** Ends every stream and the agent app (its running prompts are cancelled). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.link.close();
    this.connectionOut.close();
    for (const stream of this.sessionStreams.values()) stream.merger.close();
    this.sessionStreams.clear();
    this.parked.clear();
  }

  private readonly translator = new AcpEventTranslator((requestId) =>
    this.daemon.permissions.isOpen(requestId),
  );
  private readonly translate = this.translator.translate;

  private deliver(message: AnyMessage, route: AcpRoute, sessionId: string | undefined): void {
    const stream = route.kind === 'session' ? this.sessionStreams.get(route.sessionId) : undefined;
    if (route.kind === 'session' && route.waits) this.mustReachSession.add(message);
    if (stream !== undefined && !stream.merger.isClosed) stream.merger.push(message);
    else if (route.kind === 'session' && route.waits) this.park(route.sessionId, message);
    else this.connectionOut.push(message);
    // The session's stream may have been kept open only for this answer.
    if (sessionId !== undefined) this.sessionStreams.get(sessionId)?.merger.poke();
  }

  private park(sessionId: string, message: AnyMessage): void {
    if (this.closed) return;
    let waiting = this.parked.get(sessionId);
    if (waiting === undefined) this.parked.set(sessionId, (waiting = new LinkedQueue<AnyMessage>()));
    waiting.enqueue(message);
  }

  private onAttach(sessionId: string, replay: boolean): void {
    const stream = this.sessionStreams.get(sessionId);
    if (stream === undefined || stream.merger.isClosed) return;
    if (stream.merger.hasSubscription) {
      // Already streamed: only `session/load` needs more, the whole history again (ACP).
      if (!replay) return;
      try {
        stream.merger.replaceSubscription(
          this.daemon.bridge.streams
            .busFor(sessionId)
            .subscribe({ ...stream.subscribeOptions, lastEventId: 0 }),
        );
      } catch {
        stream.merger.close();
      }
      return;
    }
    const options =
      stream.subscribeOptions.lastEventId === undefined && replay
        ? { ...stream.subscribeOptions, lastEventId: 0 }
        : stream.subscribeOptions;
    try {
      stream.merger.addSubscription(this.daemon.bridge.streams.busFor(sessionId).subscribe(options));
    } catch {
      stream.merger.close();
    }
  }
}
