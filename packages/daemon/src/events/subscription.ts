import {
  syntheticFrame,
  type ClientEvictedData,
  type EventFrame,
  type SlowClientWarningData,
} from './frames.js';
import { RingBuffer } from './ring-buffer.js';

/** Why a subscription stopped receiving events. */
export type SubscriptionEndReason =
  /** The reader called `close()` / `return()` (e.g. `break` out of `for await`). */
  | 'unsubscribed'
  /** The queue overflowed; the last frame was `client_evicted`. */
  | 'evicted'
  /** The bus was closed (the session ended); queued frames were still delivered. */
  | 'bus_closed';

/**
 * One reader of a session's events. Frames come in this order: the replay preamble (when a
 * `lastEventId` was given: `state_resync_required`?, replayed events, `replay_complete`), then
 * live events with `slow_client_warning` / `client_evicted` in between. Read it with
 * `for await`, or synchronously with `tryRead()` while the socket accepts writes. One reader
 * at a time.
 */
export interface Subscription extends AsyncIterable<EventFrame> {
  /** The bound of live events queued for this reader. */
  readonly maxQueued: number;
  /** Live events queued and not yet read (≤ `maxQueued`); the replay preamble is not counted. */
  readonly queuedEvents: number;
  /** Frames in the live queue: `queuedEvents` plus at most one warning and one eviction frame. */
  readonly queuedFrames: number;
  /** True once the last frame was read or the subscription was closed. */
  readonly ended: boolean;
  /** Why no more events arrive, once that is decided; `undefined` while live. */
  readonly endReason: SubscriptionEndReason | undefined;
  /** The next frame if one is waiting, else `undefined` (check `ended` to tell the two apart). */
  tryRead(): EventFrame | undefined;
  /** Resolves with the next frame, or `done` once the subscription has ended. */
  next(): Promise<IteratorResult<EventFrame, undefined>>;
  /** Closes the subscription (what `break` in `for await` calls). */
  return(): Promise<IteratorResult<EventFrame, undefined>>;
  /** Unsubscribes now and drops every undelivered frame; idempotent. */
  close(): void;
  [Symbol.asyncIterator](): AsyncIterator<EventFrame, undefined>;
}

/** Share of `maxQueued` at which a subscriber gets `slow_client_warning`. */
export const SLOW_CLIENT_WARNING_RATIO = 0.75;
/** Share of `maxQueued` the queue must drop below (after the warning was read) to re-arm it. */
export const SLOW_CLIENT_REARM_RATIO = 0.5;

/** What the bus gives a subscription: its preamble, its limit and how to leave the bus. */
export interface SubscriptionInit {
  preamble: EventFrame[];
  maxQueued: number;
  /** The newest event id at subscribe time; eviction reports `droppedAfter` from here on. */
  lastEventId: number;
  now: () => number;
  /** Stop sending publishes to this subscription. */
  detach: () => void;
  /** Give its place under the subscriber limit back; called once, when it is done. */
  release: () => void;
  /** Told once if the subscription is evicted for overflowing its queue. */
  evicted?: (() => void) | undefined;
}

type State = 'open' | 'ending' | 'done';

const DONE: IteratorResult<EventFrame, undefined> = { done: true, value: undefined };

/** The bus's implementation of {@link Subscription}; constructed by `EventBus.subscribe` only. */
export class BusSubscription implements Subscription {
  readonly maxQueued: number;
  private preamble: (EventFrame | undefined)[];
  private preambleIndex = 0;
  private readonly queue: RingBuffer<EventFrame>;
  private events = 0;
  private lastQueuedId: number;
  private readonly warnAt: number;
  private readonly rearmBelow: number;
  private warned = false;
  private unreadWarning: EventFrame | undefined;
  private state: State = 'open';
  private reason: SubscriptionEndReason | undefined;
  private waiter: ((result: IteratorResult<EventFrame, undefined>) => void) | undefined;
  private readonly now: () => number;
  private readonly detach: () => void;
  private readonly release: () => void;
  private readonly evicted: (() => void) | undefined;

  constructor(init: SubscriptionInit) {
    this.preamble = init.preamble;
    this.maxQueued = init.maxQueued;
    this.lastQueuedId = init.lastEventId;
    this.now = init.now;
    this.detach = init.detach;
    this.release = init.release;
    this.evicted = init.evicted;
    // room for maxQueued events + one unread warning + the final client_evicted
    this.queue = new RingBuffer(init.maxQueued + 2);
    this.warnAt = Math.ceil(init.maxQueued * SLOW_CLIENT_WARNING_RATIO);
    this.rearmBelow = Math.floor(init.maxQueued * SLOW_CLIENT_REARM_RATIO);
  }

  get queuedEvents(): number {
    return this.events;
  }

  get queuedFrames(): number {
    return this.queue.length;
  }

  get ended(): boolean {
    return this.state === 'done';
  }

  get endReason(): SubscriptionEndReason | undefined {
    return this.reason;
  }

  /** Called by the bus for each published event while open; never blocks, never throws. */
  offer(frame: EventFrame): void {
    if (this.state !== 'open') return;
    if (this.events >= this.maxQueued) {
      const data: ClientEvictedData = {
        reason: 'queue_overflow',
        droppedAfter: this.lastQueuedId,
        queueSize: this.events,
        maxQueued: this.maxQueued,
      };
      this.queue.push(syntheticFrame('client_evicted', data, this.now()));
      this.end('evicted');
      this.evicted?.();
      return;
    }
    this.queue.push(frame);
    this.events++;
    this.lastQueuedId = frame.id ?? this.lastQueuedId;
    if (!this.warned && this.events >= this.warnAt) {
      const data: SlowClientWarningData = {
        queueSize: this.events,
        maxQueued: this.maxQueued,
        lastEventId: this.lastQueuedId,
      };
      this.warned = true;
      this.unreadWarning = syntheticFrame('slow_client_warning', data, this.now());
      this.queue.push(this.unreadWarning);
    }
    this.wake();
  }

  /** Stops receiving events; what is already queued is still delivered. */
  end(reason: SubscriptionEndReason): void {
    if (this.state !== 'open') return;
    this.state = 'ending';
    this.reason = reason;
    this.detach();
    if (!this.hasFrame()) this.finish();
    this.wake();
  }

  tryRead(): EventFrame | undefined {
    if (this.state === 'done') return undefined;
    const frame = this.take();
    if (this.state === 'ending' && !this.hasFrame()) this.finish();
    return frame;
  }

  next(): Promise<IteratorResult<EventFrame, undefined>> {
    if (this.waiter) return Promise.reject(new Error('Subscription supports one pending next() at a time'));
    const frame = this.tryRead();
    if (frame) return Promise.resolve({ done: false, value: frame });
    if (this.state === 'done') return Promise.resolve(DONE);
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  return(): Promise<IteratorResult<EventFrame, undefined>> {
    this.close();
    return Promise.resolve(DONE);
  }

  close(): void {
    if (this.state === 'done') return;
    this.reason ??= 'unsubscribed';
    this.preamble = [];
    this.queue.clear();
    this.events = 0;
    this.unreadWarning = undefined;
    this.detach();
    this.finish();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private hasFrame(): boolean {
    return this.preambleIndex < this.preamble.length || this.queue.length > 0;
  }

  private take(): EventFrame | undefined {
    if (this.preambleIndex < this.preamble.length) {
      const frame = this.preamble[this.preambleIndex];
      this.preamble[this.preambleIndex++] = undefined;
      if (this.preambleIndex === this.preamble.length) {
        this.preamble = [];
        this.preambleIndex = 0;
      }
      return frame;
    }
    const frame = this.queue.dequeue();
    if (frame === undefined) return undefined;
    if (frame.id !== undefined) this.events--;
    else if (frame === this.unreadWarning) this.unreadWarning = undefined;
    if (this.warned && this.unreadWarning === undefined && this.events < this.rearmBelow) this.warned = false;
    return frame;
  }

  private wake(): void {
    const resolve = this.waiter;
    if (!resolve) return;
    // detached first: reading the last frame may finish() the subscription, which settles waiters
    this.waiter = undefined;
    const frame = this.tryRead();
    if (frame) resolve({ done: false, value: frame });
    else if (this.state === 'done') resolve(DONE);
    else this.waiter = resolve;
  }

  private finish(): void {
    if (this.state === 'done') return;
    this.state = 'done';
    this.release();
    const resolve = this.waiter;
    this.waiter = undefined;
    resolve?.(DONE);
  }
}
