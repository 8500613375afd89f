import { randomUUID } from 'node:crypto';
import {
  EventNotSerializableError,
  InvalidLastEventIdError,
  InvalidMaxQueuedError,
  SubscriberLimitExceededError,
} from './errors.js';
import { EventRing } from './event-ring.js';
import {
  EVENT_ENVELOPE_VERSION,
  syntheticFrame,
  type EventEnvelope,
  EventFrame,
  type ReplayCompleteData,
  type StateResyncRequiredData,
} from './frames.js';
import { BusSubscription, type Subscription } from './subscription.js';
import { DEFAULT_RING_SIZE, MAX_RING_SIZE } from '../defaults.js';
import { integerInRange, positiveIntegerOrInfinity } from '../validate.js';
import type { EventMemory } from './event-memory.js';

export { DEFAULT_RING_SIZE, MAX_RING_SIZE };
/** Subscriptions one bus holds at once; more are refused with `subscriber_limit_exceeded`. */
export const DEFAULT_MAX_SUBSCRIBERS = 64;
/** Default per-subscriber queue bound (`?maxQueued=`), and its allowed range (PROTOCOL §6). */
export const DEFAULT_MAX_QUEUED = 256;
export const MIN_MAX_QUEUED = 16;
export const MAX_MAX_QUEUED = 2048;

/** Limits and time source of an {@link EventBus}; every limit is validated at construction. */
export interface EventBusOptions {
  /** Events kept for replay; an integer in [1, {@link MAX_RING_SIZE}]. Default 8000. */
  ringSize?: number;
  /** Subscriptions held at once (until each has ended); a positive integer. Default 64. */
  maxSubscribers?: number;
  /** Wall-clock time in epoch ms for `_meta.serverTimestamp`. Default `Date.now`. */
  now?: () => number;
  /** Bytes the replay window may hold (see `frameBytes`); oldest events go first. Default unbounded. */
  ringBytes?: number;
  /** The daemon-wide budget this bus's ring counts against. */
  memory?: EventMemory;
  /** Told each time a slow subscriber is evicted (its queue overflowed), for metrics. */
  onSubscriberEvicted?: () => void;
}

/** What a publisher supplies; the bus adds `id`, `v` and `_meta`. */
export interface PublishInput {
  type: string;
  data: unknown;
  promptId?: string;
  originatorClientId?: string;
}

/** How a reader joins: from where to replay, and its queue bound. */
export interface SubscribeOptions {
  /** The client's `Last-Event-ID`; absent = live events only. */
  lastEventId?: number;
  /** The client's `X-Qwen-Event-Epoch`; a different epoch forces a resync. */
  epoch?: string;
  /** Per-subscriber queue bound in [16, 2048]; default 256. */
  maxQueued?: number;
}

/**
 * The event stream of one session (PROTOCOL §6): numbers events from 1, keeps the newest
 * `ringSize` for replay, and fans each one out to bounded per-subscriber queues. `publish` is
 * synchronous and O(subscribers): a slow reader is warned, then evicted, never waited for.
 */
export class EventBus {
  /** Identity of this bus instance; ids from another epoch mean nothing here. */
  readonly epoch: string = randomUUID();
  readonly ringSize: number;
  readonly maxSubscribers: number;
  private readonly ring: EventRing;
  private readonly now: () => number;
  private readonly onSubscriberEvicted: (() => void) | undefined;
  /** Subscriptions that receive new events. */
  private readonly receivers = new Set<BusSubscription>();
  /** Subscriptions counted against `maxSubscribers`: receivers plus those still draining. */
  private readonly holders = new Set<BusSubscription>();
  private closed = false;
  private reasonClosed: string | undefined;

  constructor(options: EventBusOptions = {}) {
    this.ringSize = integerInRange('ringSize', options.ringSize ?? DEFAULT_RING_SIZE, 1, MAX_RING_SIZE);
    this.maxSubscribers = integerInRange(
      'maxSubscribers',
      options.maxSubscribers ?? DEFAULT_MAX_SUBSCRIBERS,
      1,
      Number.MAX_SAFE_INTEGER,
    );
    const now = options.now ?? Date.now;
    if (typeof now !== 'function') throw new TypeError(`now must be a function, got ${String(now)}`);
    this.now = now;
    this.onSubscriberEvicted = options.onSubscriberEvicted;
    const ringBytes = positiveIntegerOrInfinity('ringBytes', options.ringBytes ?? Infinity);
    this.ring = new EventRing(this.ringSize, ringBytes, options.memory);
  }

  /** Bytes its replay window holds. */
  get retainedBytes(): number {
    return this.ring.bytes;
  }

  /** Releases the replay window (and its share of the daemon-wide budget) once the bus is dropped. */
  dispose(): void {
    this.close('disposed');
    this.ring.release();
  }

  /** Id of the newest event; 0 before the first. Read it before admitting a prompt (§5). */
  get lastEventId(): number {
    return this.ring.lastId;
  }

  /** Id of the oldest event still available for replay, or `undefined` before the first. */
  get earliestEventId(): number | undefined {
    return this.ring.earliestId;
  }

  /** Events retained for replay (≤ `ringSize`). */
  get retainedEvents(): number {
    return this.ring.length;
  }

  /** Subscriptions held now, counted against `maxSubscribers`. */
  get subscriberCount(): number {
    return this.holders.size;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** The reason given to `close`, once closed. */
  get closeReason(): string | undefined {
    return this.reasonClosed;
  }

  /**
   * Numbers, stores and fans out one event; returns its envelope, or `undefined` once the bus
   * is closed (late events of a closing session are dropped). Never awaits. Throws
   * {@link EventNotSerializableError} (nothing published) when the event is not JSON.
   */
  publish(input: PublishInput): EventEnvelope | undefined {
    if (this.closed) return undefined;
    const { type } = input;
    if (typeof type !== 'string' || type.length === 0 || /[\r\n]/.test(type))
      throw new TypeError(
        `event type must be a non-empty string without line breaks, got ${JSON.stringify(type)}`,
      );
    const { promptId, originatorClientId } = input;
    const envelope: EventEnvelope & { id: number } = {
      id: this.ring.lastId + 1,
      v: EVENT_ENVELOPE_VERSION,
      type,
      data: input.data ?? null,
      ...(promptId !== undefined ? { promptId } : {}),
      ...(originatorClientId !== undefined ? { originatorClientId } : {}),
      _meta: { serverTimestamp: this.now() },
    };
    let json: string;
    try {
      json = JSON.stringify(envelope);
    } catch (error) {
      throw new EventNotSerializableError(type, error);
    }
    const frame = new EventFrame(envelope.id, type, json);
    this.ring.append(frame);
    for (const subscription of this.receivers) subscription.offer(frame);
    return envelope;
  }

  /**
   * Adds a reader (synchronously: events published after this call reach it). With
   * `lastEventId` the reader first gets the replay of PROTOCOL §6; without it, live events only.
   * Throws {@link InvalidMaxQueuedError}, {@link InvalidLastEventIdError} or
   * {@link SubscriberLimitExceededError}. On a closed bus the replay is still served, then the
   * subscription ends.
   */
  subscribe(options: SubscribeOptions = {}): Subscription {
    const maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED;
    if (!Number.isInteger(maxQueued) || maxQueued < MIN_MAX_QUEUED || maxQueued > MAX_MAX_QUEUED)
      throw new InvalidMaxQueuedError(maxQueued, MIN_MAX_QUEUED, MAX_MAX_QUEUED);
    const { lastEventId } = options;
    if (lastEventId !== undefined && !(Number.isSafeInteger(lastEventId) && lastEventId >= 0))
      throw new InvalidLastEventIdError(lastEventId);
    if (this.holders.size >= this.maxSubscribers) throw new SubscriberLimitExceededError(this.maxSubscribers);

    const subscription: BusSubscription = new BusSubscription({
      preamble: lastEventId === undefined ? [] : this.replayPreamble(lastEventId, options.epoch),
      maxQueued,
      lastEventId: this.ring.lastId,
      now: this.now,
      detach: () => this.receivers.delete(subscription),
      release: () => this.holders.delete(subscription),
      evicted: this.onSubscriberEvicted,
    });
    this.holders.add(subscription);
    if (this.closed) subscription.end('bus_closed');
    else this.receivers.add(subscription);
    return subscription;
  }

  /**
   * Closes the bus: later `publish` calls are dropped, and every subscription ends after its
   * queued frames are read. Publish the session's terminal event first. Idempotent.
   */
  close(reason = 'closed'): void {
    if (this.closed) return;
    this.closed = true;
    this.reasonClosed = reason;
    for (const subscription of this.receivers) subscription.end('bus_closed');
    this.receivers.clear();
  }

  private replayPreamble(lastEventId: number, epoch: string | undefined): EventFrame[] {
    const timestamp = this.now();
    const newestId = this.ring.lastId;
    const earliestId = this.ring.earliestId;
    const preamble: EventFrame[] = [];
    let replayAfter = lastEventId;
    const epochMismatch = epoch !== undefined && epoch !== this.epoch;
    if (epochMismatch || lastEventId > newestId) {
      const data: StateResyncRequiredData = {
        reason: 'epoch_reset',
        ...(epochMismatch ? { detail: 'epoch_mismatch' as const } : {}),
        lastDeliveredId: lastEventId,
        earliestAvailableId: earliestId ?? newestId + 1,
      };
      preamble.push(syntheticFrame('state_resync_required', data, timestamp));
      replayAfter = 0;
    } else if (earliestId !== undefined && earliestId > lastEventId + 1) {
      const data: StateResyncRequiredData = {
        reason: 'ring_evicted',
        lastDeliveredId: lastEventId,
        earliestAvailableId: earliestId,
      };
      preamble.push(syntheticFrame('state_resync_required', data, timestamp));
    }
    const replayStart = preamble.length;
    this.ring.framesAfter(replayAfter, preamble);
    const replayedCount = preamble.length - replayStart;
    const lastReplayed = replayedCount > 0 ? preamble[preamble.length - 1]?.id : undefined;
    const data: ReplayCompleteData =
      lastReplayed === undefined ? { replayedCount } : { lastReplayedEventId: lastReplayed, replayedCount };
    preamble.push(syntheticFrame('replay_complete', data, timestamp));
    return preamble;
  }
}
