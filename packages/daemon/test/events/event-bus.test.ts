import { describe, expect, test } from 'vitest';
import {
  EventBus,
  EventNotSerializableError,
  InvalidLastEventIdError,
  InvalidMaxQueuedError,
  SubscriberLimitExceededError,
  formatSseFrame,
  type EventFrame,
  type Subscription,
} from '../../src/events/index.js';

/** Reads every frame waiting now, without waiting for more. */
function drain(subscription: Subscription): EventFrame[] {
  const frames: EventFrame[] = [];
  for (let frame = subscription.tryRead(); frame; frame = subscription.tryRead()) frames.push(frame);
  return frames;
}

function publishMany(bus: EventBus, count: number): void {
  for (let i = 0; i < count; i++) bus.publish({ type: 'session_update', data: { n: i } });
}

/** Compact view of frames: event ids as numbers, synthetic frames as their type. */
function shape(frames: EventFrame[]): (number | string)[] {
  return frames.map((frame) => frame.id ?? frame.type);
}

const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('publishing', () => {
  test('§6 ids start at 1 and strictly increase; lastEventId follows them', () => {
    const bus = new EventBus();
    expect(bus.lastEventId).toBe(0);
    const ids = range(1, 5).map(() => bus.publish({ type: 'session_update', data: {} })?.id);
    expect(ids).toEqual([1, 2, 3, 4, 5]);
    expect(bus.lastEventId).toBe(5);
  });

  test('§6 publish returns the stored envelope with v: 1 and the wall-clock serverTimestamp', () => {
    let wallClock = 1_700_000_000_000;
    const bus = new EventBus({ now: () => wallClock++ });
    const envelope = bus.publish({
      type: 'turn_complete',
      data: { stopReason: 'end_turn' },
      promptId: 'p-1',
      originatorClientId: 'c-1',
    });
    expect(envelope).toEqual({
      id: 1,
      v: 1,
      type: 'turn_complete',
      data: { stopReason: 'end_turn' },
      promptId: 'p-1',
      originatorClientId: 'c-1',
      _meta: { serverTimestamp: 1_700_000_000_000 },
    });
    const plain = bus.publish({ type: 'session_update', data: undefined });
    expect(plain).toEqual({
      id: 2,
      v: 1,
      type: 'session_update',
      data: null,
      _meta: { serverTimestamp: 1_700_000_000_001 },
    });
    expect(Object.keys(plain ?? {})).not.toContain('promptId');
  });

  test('§6 an event frame carries its id, type and the envelope as one JSON line for SSE', () => {
    const bus = new EventBus({ now: () => 42 });
    const subscription = bus.subscribe();
    bus.publish({ type: 'session_update', data: { text: 'two\nlines' } });
    const [frame] = drain(subscription);
    expect(frame?.id).toBe(1);
    expect(frame?.type).toBe('session_update');
    expect(JSON.parse(frame?.json ?? '')).toEqual(frame?.envelope);
    expect(formatSseFrame(frame as EventFrame)).toBe(
      'id: 1\nevent: session_update\ndata: {"id":1,"v":1,"type":"session_update","data":{"text":"two\\nlines"},"_meta":{"serverTimestamp":42}}\n\n',
    );
  });

  test('§6 synthetic frames have no id line', () => {
    const bus = new EventBus({ now: () => 7 });
    const [frame] = drain(bus.subscribe({ lastEventId: 0 }));
    expect(frame?.id).toBeUndefined();
    expect(formatSseFrame(frame as EventFrame)).toBe(
      'event: replay_complete\ndata: {"v":1,"type":"replay_complete","data":{"replayedCount":0},"_meta":{"serverTimestamp":7}}\n\n',
    );
  });

  test('each bus has its own random UUID epoch', () => {
    const a = new EventBus();
    const b = new EventBus();
    expect(a.epoch).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a.epoch).not.toBe(b.epoch);
  });

  test('an event that is not JSON is refused and burns no id', () => {
    const bus = new EventBus();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => bus.publish({ type: 'session_update', data: cyclic })).toThrow(EventNotSerializableError);
    expect(() => bus.publish({ type: 'session_update', data: { n: 1n } })).toThrow(
      expect.objectContaining({ code: 'event_not_serializable' }),
    );
    expect(bus.lastEventId).toBe(0);
    expect(bus.publish({ type: 'session_update', data: {} })?.id).toBe(1);
  });

  test('an event type that would break SSE framing is refused', () => {
    const bus = new EventBus();
    expect(() => bus.publish({ type: 'a\nb', data: {} })).toThrow('event type must be a non-empty string');
    expect(() => bus.publish({ type: '', data: {} })).toThrow('got ""');
    expect(bus.lastEventId).toBe(0);
  });
});

describe('replay (PROTOCOL §6)', () => {
  test('§6 without Last-Event-ID a subscriber gets live events only', () => {
    const bus = new EventBus();
    publishMany(bus, 3);
    const subscription = bus.subscribe();
    expect(drain(subscription)).toEqual([]);
    publishMany(bus, 2);
    expect(shape(drain(subscription))).toEqual([4, 5]);
  });

  test('§6 with Last-Event-ID n the ring events with id > n are replayed, then replay_complete, then live', () => {
    const bus = new EventBus();
    publishMany(bus, 5);
    const subscription = bus.subscribe({ lastEventId: 2, epoch: bus.epoch });
    publishMany(bus, 1);
    const frames = drain(subscription);
    expect(shape(frames)).toEqual([3, 4, 5, 'replay_complete', 6]);
    expect(frames[3]?.envelope.data).toEqual({ lastReplayedEventId: 5, replayedCount: 3 });
  });

  test('§6 replay_complete is sent even when there is nothing to replay, without lastReplayedEventId', () => {
    const bus = new EventBus();
    publishMany(bus, 5);
    const frames = drain(bus.subscribe({ lastEventId: 5 }));
    expect(shape(frames)).toEqual(['replay_complete']);
    expect(frames[0]?.envelope.data).toEqual({ replayedCount: 0 });
  });

  test('§6 an epoch mismatch sends state_resync_required (epoch_reset), the whole ring, then replay_complete', () => {
    const bus = new EventBus();
    publishMany(bus, 4);
    const frames = drain(bus.subscribe({ lastEventId: 2, epoch: 'an-epoch-of-a-previous-daemon' }));
    expect(shape(frames)).toEqual(['state_resync_required', 1, 2, 3, 4, 'replay_complete']);
    expect(frames[0]?.envelope.data).toEqual({
      reason: 'epoch_reset',
      detail: 'epoch_mismatch',
      lastDeliveredId: 2,
      earliestAvailableId: 1,
    });
    expect(frames[5]?.envelope.data).toEqual({ lastReplayedEventId: 4, replayedCount: 4 });
  });

  test('§6 a Last-Event-ID beyond the last id is an epoch_reset with the whole ring replayed', () => {
    const bus = new EventBus();
    publishMany(bus, 3);
    const frames = drain(bus.subscribe({ lastEventId: 50 }));
    expect(shape(frames)).toEqual(['state_resync_required', 1, 2, 3, 'replay_complete']);
    expect(frames[0]?.envelope.data).toEqual({
      reason: 'epoch_reset',
      lastDeliveredId: 50,
      earliestAvailableId: 1,
    });
    expect(frames[4]?.envelope.data).toEqual({ lastReplayedEventId: 3, replayedCount: 3 });
  });

  test('§6 after a restart (empty ring) a stale cursor gets epoch_reset naming the first id to come', () => {
    const frames = drain(new EventBus().subscribe({ lastEventId: 7 }));
    expect(shape(frames)).toEqual(['state_resync_required', 'replay_complete']);
    expect(frames[0]?.envelope.data).toEqual({
      reason: 'epoch_reset',
      lastDeliveredId: 7,
      earliestAvailableId: 1,
    });
    expect(frames[1]?.envelope.data).toEqual({ replayedCount: 0 });
  });

  test('§6 an evicted gap sends state_resync_required (ring_evicted) with earliestAvailableId, then the whole ring', () => {
    const bus = new EventBus({ ringSize: 16 });
    publishMany(bus, 100);
    const frames = drain(bus.subscribe({ lastEventId: 10, epoch: bus.epoch }));
    expect(shape(frames)).toEqual(['state_resync_required', ...range(85, 100), 'replay_complete']);
    expect(frames[0]?.envelope.data).toEqual({
      reason: 'ring_evicted',
      lastDeliveredId: 10,
      earliestAvailableId: 85,
    });
    expect(frames[17]?.envelope.data).toEqual({ lastReplayedEventId: 100, replayedCount: 16 });
  });

  test('§6 a cursor just before the earliest retained id is no gap', () => {
    const bus = new EventBus({ ringSize: 16 });
    publishMany(bus, 100);
    expect(shape(drain(bus.subscribe({ lastEventId: 84 })))).toEqual([...range(85, 100), 'replay_complete']);
  });

  test('§6 the ring is bounded: a ring of 16 keeps the newest 16 of 100 events', () => {
    const bus = new EventBus({ ringSize: 16 });
    for (let i = 1; i <= 100; i++) {
      bus.publish({ type: 'session_update', data: {} });
      expect(bus.retainedEvents).toBe(Math.min(i, 16));
    }
    expect(bus.earliestEventId).toBe(85);
    expect(bus.lastEventId).toBe(100);
  });

  test('the replay is a snapshot: events published while it is read arrive once, after replay_complete', () => {
    const bus = new EventBus({ ringSize: 4 });
    publishMany(bus, 4);
    const subscription = bus.subscribe({ lastEventId: 0 });
    publishMany(bus, 6); // evicts every replayed event from the ring
    expect(shape(drain(subscription))).toEqual([1, 2, 3, 4, 'replay_complete', 5, 6, 7, 8, 9, 10]);
  });

  test('a Last-Event-ID that is not a non-negative integer is refused', () => {
    const bus = new EventBus();
    for (const lastEventId of [-1, 1.5, Number.NaN])
      expect(() => bus.subscribe({ lastEventId })).toThrow(InvalidLastEventIdError);
    expect(() => bus.subscribe({ lastEventId: -1 })).toThrow(
      'lastEventId must be a non-negative integer, got -1',
    );
  });
});

describe('slow subscribers (PROTOCOL §6)', () => {
  test('§6 a slow subscriber gets one slow_client_warning at 75 %, then client_evicted on overflow; a fast one gets everything', () => {
    const bus = new EventBus();
    const slow = bus.subscribe({ maxQueued: 16 });
    const fast = bus.subscribe({ maxQueued: 16 });
    const fastFrames: EventFrame[] = [];
    for (let i = 1; i <= 40; i++) {
      bus.publish({ type: 'session_update', data: { i } });
      fastFrames.push(...drain(fast));
      if (i <= 16) expect(slow.queuedEvents).toBe(i);
    }
    expect(shape(fastFrames)).toEqual(range(1, 40));
    expect(slow.endReason).toBe('evicted');
    expect(slow.ended).toBe(false); // its queued frames are still readable

    const slowFrames = drain(slow);
    expect(shape(slowFrames)).toEqual([
      ...range(1, 12),
      'slow_client_warning',
      ...range(13, 16),
      'client_evicted',
    ]);
    expect(slowFrames[12]?.envelope.data).toEqual({ queueSize: 12, maxQueued: 16, lastEventId: 12 });
    expect(slowFrames[17]?.envelope.data).toEqual({
      reason: 'queue_overflow',
      droppedAfter: 16,
      queueSize: 16,
      maxQueued: 16,
    });
    expect(slow.ended).toBe(true);
    expect(bus.subscriberCount).toBe(1);
  });

  test('§6 the warning re-arms only after it was read and the backlog fell below half of maxQueued', () => {
    const bus = new EventBus();
    const subscription = bus.subscribe({ maxQueued: 16 });
    const read = (count: number): EventFrame[] =>
      Array.from({ length: count }, () => subscription.tryRead()).filter(
        (f): f is EventFrame => f !== undefined,
      );
    const warnings = (frames: EventFrame[]): number =>
      frames.filter((f) => f.type === 'slow_client_warning').length;

    publishMany(bus, 12); // backlog 12 = 75 % → warning 1 queued after event 12
    expect(subscription.queuedFrames).toBe(13);
    let seen = warnings(read(6)); // backlog 6, warning unread
    publishMany(bus, 4); // backlog 10
    seen += warnings(read(6)); // backlog 4, warning still unread: not re-armed
    publishMany(bus, 8); // backlog 12: no second warning in this episode
    seen += warnings(read(1)); // the warning; backlog 12 ≥ 8: not re-armed
    expect(seen).toBe(1);
    expect(subscription.queuedFrames).toBe(12);
    seen += warnings(read(5)); // backlog 7 < 8: re-armed
    publishMany(bus, 5); // backlog 12 again → warning 2
    seen += warnings(read(100));
    expect(seen).toBe(2);
    expect(subscription.endReason).toBeUndefined();
  });

  test('§6 replayed events do not count against maxQueued', () => {
    const bus = new EventBus();
    publishMany(bus, 500);
    const subscription = bus.subscribe({ lastEventId: 0, maxQueued: 16 });
    expect(subscription.queuedEvents).toBe(0);
    publishMany(bus, 16);
    expect(subscription.queuedEvents).toBe(16);
    const frames = drain(subscription);
    expect(frames).toHaveLength(500 + 1 + 16 + 1);
    expect(frames.filter((f) => f.type === 'client_evicted')).toHaveLength(0);
  });

  test('§6 maxQueued outside [16, 2048] is refused with invalid_max_queued naming the value', () => {
    const bus = new EventBus();
    for (const maxQueued of [15, 2049, 16.5, Number.NaN, 0]) {
      expect(() => bus.subscribe({ maxQueued })).toThrow(InvalidMaxQueuedError);
      expect(() => bus.subscribe({ maxQueued })).toThrow(
        `maxQueued must be an integer in [16, 2048], got ${maxQueued}`,
      );
    }
    expect(() => bus.subscribe({ maxQueued: 15 })).toThrow(
      expect.objectContaining({ code: 'invalid_max_queued', value: 15 }),
    );
    expect(bus.subscribe({ maxQueued: 16 }).maxQueued).toBe(16);
    expect(bus.subscribe({ maxQueued: 2048 }).maxQueued).toBe(2048);
    expect(bus.subscribe().maxQueued).toBe(256);
  });
});

describe('subscriber limit', () => {
  test('§6 subscribing beyond maxSubscribers throws subscriber_limit_exceeded; closing one frees a place', () => {
    const bus = new EventBus({ maxSubscribers: 2 });
    const first = bus.subscribe();
    bus.subscribe();
    expect(() => bus.subscribe()).toThrow(SubscriberLimitExceededError);
    expect(() => bus.subscribe()).toThrow(
      expect.objectContaining({ code: 'subscriber_limit_exceeded', limit: 2 }),
    );
    first.close();
    expect(bus.subscriberCount).toBe(1);
    expect(() => bus.subscribe()).not.toThrow();
  });

  test('an evicted subscriber holds its place until its frames are read or it is closed', () => {
    const bus = new EventBus({ maxSubscribers: 1 });
    const stalled = bus.subscribe({ maxQueued: 16 });
    publishMany(bus, 17);
    expect(stalled.endReason).toBe('evicted');
    expect(() => bus.subscribe()).toThrow(SubscriberLimitExceededError);
    stalled.close();
    expect(stalled.tryRead()).toBeUndefined();
    expect(bus.subscribe()).toBeDefined();
  });

  test('the bus options are validated at construction with the value in the message', () => {
    expect(() => new EventBus({ ringSize: 0 })).toThrow('ringSize must be an integer in [1, 1000000], got 0');
    expect(() => new EventBus({ ringSize: 2.5 })).toThrow('got 2.5');
    expect(() => new EventBus({ ringSize: 1_000_001 })).toThrow(RangeError);
    expect(() => new EventBus({ maxSubscribers: 0 })).toThrow('maxSubscribers must be an integer');
    expect(new EventBus().ringSize).toBe(8000);
    expect(new EventBus().maxSubscribers).toBe(64);
  });
});

describe('iteration and closing', () => {
  test('for await receives events published later; break unsubscribes', async () => {
    const bus = new EventBus();
    const subscription = bus.subscribe();
    const received: number[] = [];
    const reader = (async () => {
      for await (const frame of subscription) {
        received.push(frame.id ?? -1);
        if (received.length === 3) break;
      }
    })();
    publishMany(bus, 2);
    await Promise.resolve();
    publishMany(bus, 3);
    await reader;
    expect(received).toEqual([1, 2, 3]);
    expect(subscription.ended).toBe(true);
    expect(subscription.endReason).toBe('unsubscribed');
    expect(bus.subscriberCount).toBe(0);
  });

  test('a pending next() resolves on the next publish', async () => {
    const bus = new EventBus();
    const subscription = bus.subscribe();
    const pending = subscription.next();
    bus.publish({ type: 'prompt_cancelled', data: {} });
    const result = await pending;
    expect(result.done).toBe(false);
    expect(result.value?.type).toBe('prompt_cancelled');
  });

  test('close() settles a pending next() with done and drops undelivered frames', async () => {
    const bus = new EventBus();
    const idle = bus.subscribe();
    const pending = idle.next();
    idle.close();
    await expect(pending).resolves.toEqual({ done: true, value: undefined });

    const busy = bus.subscribe();
    publishMany(bus, 3);
    busy.close();
    expect(busy.tryRead()).toBeUndefined();
    expect(busy.queuedFrames).toBe(0);
    publishMany(bus, 1);
    expect(busy.queuedFrames).toBe(0);
  });

  test('only one next() may be pending at a time', async () => {
    const subscription = new EventBus().subscribe();
    const first = subscription.next();
    await expect(subscription.next()).rejects.toThrow('one pending next()');
    subscription.close();
    await first;
  });

  test('§4 close delivers every queued frame (the terminal session_closed last), then ends the streams', async () => {
    const bus = new EventBus();
    const subscription = bus.subscribe();
    const waiting = bus.subscribe();
    const waited = waiting.next();
    publishMany(bus, 3);
    bus.publish({ type: 'session_closed', data: { sessionId: 's', reason: 'client_close' } });
    bus.close('session_closed');

    const types: string[] = [];
    for await (const frame of subscription) types.push(frame.type);
    expect(types).toEqual(['session_update', 'session_update', 'session_update', 'session_closed']);
    expect(subscription.endReason).toBe('bus_closed');
    expect((await waited).value?.id).toBe(1);
    expect(shape(drain(waiting))).toEqual([2, 3, 4]);
    expect(waiting.ended).toBe(true);
    expect(bus.subscriberCount).toBe(0);
    expect(bus.closeReason).toBe('session_closed');
  });

  test('a closed bus drops later publishes and serves replay before ending', () => {
    const bus = new EventBus();
    publishMany(bus, 2);
    bus.close();
    expect(bus.publish({ type: 'session_update', data: {} })).toBeUndefined();
    expect(bus.lastEventId).toBe(2);
    const live = bus.subscribe();
    expect(live.ended).toBe(true);
    const replay = bus.subscribe({ lastEventId: 1 });
    expect(shape(drain(replay))).toEqual([2, 'replay_complete']);
    expect(replay.ended).toBe(true);
    expect(bus.subscriberCount).toBe(0);
  });
});
