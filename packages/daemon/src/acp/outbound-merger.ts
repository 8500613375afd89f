import type { AnyMessage } from '@agentclientprotocol/sdk';
import { LinkedQueue } from '@sluice/runtime/queue';
import type { EventFrame, Subscription } from '../events/index.js';

/** One message ready for the wire, with the bus event id it came from (for SSE `id:`). */
export interface OutboundItem {
  readonly message: AnyMessage;
  readonly eventId?: number;
}

/**
 * How to follow a session again after the bus evicted its subscription: an ACP stream has no
 * reconnect of its own (stdio never; a session stream not while a request of it is unanswered),
 * so it re-subscribes after the last event it handed out and the replay fills the gap.
 */
export interface Resume {
  /** The newest event id when the subscription started (what "nothing read yet" resumes after). */
  readonly after: number;
  subscribe(lastEventId: number): Subscription;
}

interface Source {
  readonly subscription: Subscription;
  held: EventFrame | undefined;
  reading: boolean;
  /** The id of the last event handed out. */
  lastId: number;
  readonly resume: Resume | undefined;
}

/**
 * The outbound side of one ACP stream: session events from bus subscriptions merged with the
 * agent's own messages (responses), read by one writer. Session events go first, so a
 * `session/prompt` response never overtakes the turn's updates. It buffers nothing itself: the
 * subscriptions are the bus's bounded queues (a slow reader is evicted there), and direct
 * messages are bounded by the transport's in-flight request cap.
 */
export class OutboundMerger {
  private readonly sources = new Set<Source>();
  private readonly direct = new LinkedQueue<AnyMessage>();
  /** Messages a frame translated into after its first one; written before anything else. */
  private readonly followers = new LinkedQueue<AnyMessage>();
  private wake: (() => void) | undefined;
  private closed = false;
  private subscribed = false;

  /**
   * @param translate turns a bus frame into its ACP message (or messages: the first carries the
   *   frame's event id).
   * @param mayEnd for a session stream: `next()` ends once its subscription ended (the session
   *   closed), the direct messages are read and `mayEnd()` agrees (no request of the session is
   *   still unanswered — a client fails those when the stream ends). Absent: never ends by itself.
   */
  constructor(
    private readonly translate: (frame: EventFrame) => AnyMessage | readonly AnyMessage[],
    private readonly mayEnd?: () => boolean,
  ) {}

  /** Direct messages waiting for the writer. */
  get queued(): number {
    return this.direct.size;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Adds a session's subscription; it leaves by itself once it has ended. With `resume`, an
   * evicted subscription is followed by a new one from where the reader was.
   */
  addSubscription(subscription: Subscription, resume?: Resume): void {
    if (this.closed) {
      subscription.close();
      return;
    }
    this.subscribed = true;
    this.sources.add({ subscription, held: undefined, reading: false, lastId: resume?.after ?? 0, resume });
    this.notify();
  }

  /**
   * Replaces every subscription with `subscription` (a `session/load` of a session already
   * streamed here: its history again, from the start). Frames the old ones had not handed out
   * are in the new one's replay.
   */
  replaceSubscription(subscription: Subscription): void {
    for (const source of this.sources) source.subscription.close();
    this.sources.clear();
    this.addSubscription(subscription);
  }

  /**
   * Replaces one of several subscriptions (a `session/load` on a connection that streams more
   * than one session). A frame the old one had read but not handed out is dropped with it: the
   * new one's replay has it, and it must reach the reader once.
   */
  replaceOne(old: Subscription, subscription: Subscription, resume?: Resume): void {
    old.close();
    for (const source of this.sources) if (source.subscription === old) this.sources.delete(source);
    this.addSubscription(subscription, resume);
  }

  /** Queues a message of the agent side (a response). */
  push(message: AnyMessage): void {
    if (this.closed) return;
    this.direct.enqueue(message);
    this.notify();
  }

  /** Wakes the reader to re-check whether the stream may end. */
  poke(): void {
    this.notify();
  }

  /** Takes back the direct messages nobody read (to re-route them), closing nothing. */
  drainDirect(): AnyMessage[] {
    const left: AnyMessage[] = [];
    for (let message = this.direct.dequeue(); message !== undefined; message = this.direct.dequeue())
      left.push(message);
    return left;
  }

  /**
   * The next item, waiting for one; `undefined` once closed, or once `detached()` (the reader
   * left, the merger stays open for the next one: wake it with {@link poke}).
   */
  async next(detached?: () => boolean): Promise<OutboundItem | undefined> {
    for (;;) {
      if (this.closed || detached?.() === true) return undefined;
      const item = this.take();
      if (item !== undefined) return item;
      if (this.mayEnd !== undefined && this.subscribed && this.sources.size === 0 && this.mayEnd())
        return undefined;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** Whether a subscription was ever added. */
  get hasSubscription(): boolean {
    return this.subscribed;
  }

  /** Closes every subscription and wakes the writer with `undefined`. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const source of this.sources) source.subscription.close();
    this.sources.clear();
    this.notify();
  }

  private take(): OutboundItem | undefined {
    const follower = this.followers.dequeue();
    if (follower !== undefined) return { message: follower };
    for (const source of this.sources) {
      let frame = source.held;
      source.held = undefined;
      if (frame === undefined && !source.reading) frame = source.subscription.tryRead();
      if (frame !== undefined) {
        if (frame.id !== undefined) source.lastId = frame.id;
        return this.item(frame);
      }
      if (source.subscription.ended && !source.reading) {
        this.sources.delete(source);
        this.follow(source);
      } else this.arm(source);
    }
    const message = this.direct.dequeue();
    return message === undefined ? undefined : { message };
  }

  /** An evicted subscription with a `resume` is followed by a new one after its last event. */
  private follow(source: Source): void {
    const { resume, subscription, lastId } = source;
    if (resume === undefined || subscription.endReason !== 'evicted' || this.closed) return;
    let next: Subscription;
    try {
      next = resume.subscribe(lastId);
    } catch {
      return; // the session is gone, or its bus full of readers: as before, no more events
    }
    this.sources.add({ subscription: next, held: undefined, reading: false, lastId, resume });
  }

  private item(frame: EventFrame): OutboundItem {
    const translated = this.translate(frame);
    let message: AnyMessage;
    if (Array.isArray(translated)) {
      const [first, ...rest] = translated as readonly AnyMessage[];
      message = first!;
      for (const follower of rest) this.followers.enqueue(follower);
    } else message = translated as AnyMessage;
    return frame.id === undefined ? { message } : { message, eventId: frame.id };
  }

  /** Waits for the subscription's next frame without blocking the other sources. */
  private arm(source: Source): void {
    if (source.reading || source.subscription.ended) return;
    source.reading = true;
    void source.subscription.next().then((step) => {
      source.reading = false;
      if (!step.done) source.held = step.value;
      this.notify();
    });
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
