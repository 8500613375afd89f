import fc from 'fast-check';
import { expect, test } from 'vitest';
import {
  EventBus,
  SubscriberLimitExceededError,
  type EventFrame,
  type StateResyncRequiredData,
  type Subscription,
} from '../../src/events/index.js';

type Op =
  | { op: 'publish'; count: number }
  | { op: 'subscribe'; cursor: number | undefined; epoch: 'same' | 'other' | 'none'; maxQueued: number }
  | { op: 'read'; pick: number; count: number }
  | { op: 'unsubscribe'; pick: number }
  | { op: 'closeBus' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 16,
    arbitrary: fc.record({ op: fc.constant('publish' as const), count: fc.integer({ min: 1, max: 10 }) }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('subscribe' as const),
      // cursor relative to the bus's last id: negative = behind, positive = beyond
      cursor: fc.option(fc.integer({ min: -60, max: 4 }), { nil: undefined }),
      epoch: fc.constantFrom('same' as const, 'other' as const, 'none' as const),
      maxQueued: fc.integer({ min: 16, max: 20 }),
    }),
  },
  {
    weight: 12,
    arbitrary: fc.record({
      op: fc.constant('read' as const),
      pick: fc.nat(),
      count: fc.integer({ min: 0, max: 24 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('unsubscribe' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ op: 'closeBus' as const }) },
);

/** What the test knows about one reader, from the frames it has read. */
interface Reader {
  subscription: Subscription;
  maxQueued: number;
  /** The id the next event frame must carry. */
  nextId: number;
  /** `replay_complete` still expected (a Last-Event-ID was given). */
  inReplay: boolean;
  expectedResync: StateResyncRequiredData['reason'] | undefined;
  framesRead: number;
  replayed: number;
  lastReplayed: number | undefined;
  /** False from a warning until the backlog is seen below half: no second warning in one episode. */
  mayWarn: boolean;
  evicted: boolean;
  unsubscribed: boolean;
}

function readFrame(reader: Reader, frame: EventFrame): void {
  const { envelope } = frame;
  expect(JSON.parse(frame.json)).toEqual(envelope);
  expect(envelope.v).toBe(1);
  expect(envelope.type).toBe(frame.type);
  expect(reader.evicted).toBe(false); // nothing follows client_evicted
  const first = reader.framesRead++ === 0;
  if (frame.id !== undefined) {
    expect(envelope.id).toBe(frame.id);
    expect(frame.id).toBe(reader.nextId); // strictly increasing, no gap unless announced
    reader.nextId = frame.id + 1;
    if (reader.inReplay) {
      reader.replayed++;
      reader.lastReplayed = frame.id;
    }
    return;
  }
  expect(envelope.id).toBeUndefined();
  const data = envelope.data as Record<string, unknown>;
  switch (frame.type) {
    case 'state_resync_required':
      expect(first).toBe(true);
      expect(data.reason).toBe(reader.expectedResync);
      reader.expectedResync = undefined;
      reader.nextId = data.earliestAvailableId as number; // the announced gap
      break;
    case 'replay_complete':
      expect(reader.inReplay).toBe(true);
      expect(reader.expectedResync).toBeUndefined();
      expect(data.replayedCount).toBe(reader.replayed);
      expect(data.lastReplayedEventId).toBe(reader.lastReplayed);
      reader.inReplay = false;
      break;
    case 'slow_client_warning':
      expect(reader.inReplay).toBe(false);
      expect(reader.mayWarn).toBe(true);
      expect(data.queueSize).toBeGreaterThanOrEqual(Math.ceil(reader.maxQueued * 0.75));
      reader.mayWarn = false;
      break;
    case 'client_evicted':
      expect(data.queueSize).toBe(reader.maxQueued);
      expect(data.droppedAfter).toBe(reader.nextId - 1);
      reader.evicted = true;
      break;
    default:
      throw new Error(`unexpected synthetic frame ${frame.type}`);
  }
}

function read(reader: Reader, count: number): void {
  for (let i = 0; i < count; i++) {
    const frame = reader.subscription.tryRead();
    if (!frame) break;
    readFrame(reader, frame);
    if (!reader.mayWarn && reader.subscription.queuedEvents < Math.floor(reader.maxQueued / 2))
      reader.mayWarn = true;
  }
}

test('§6 random publish/subscribe/read/close interleavings: contiguous ids per reader except announced gaps, bounded queues and ring', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 40 }),
      fc.integer({ min: 1, max: 4 }),
      fc.array(opArb, { minLength: 1, maxLength: 120, size: 'max' }),
      (ringSize, maxSubscribers, ops) => {
        const bus = new EventBus({ ringSize, maxSubscribers, now: () => 1_000 });
        const readers: Reader[] = [];
        let busClosed = false;
        const open = () => readers.filter((r) => !r.subscription.ended);

        for (const op of ops) {
          if (op.op === 'publish') {
            for (let i = 0; i < op.count; i++) {
              const before = bus.lastEventId;
              const envelope = bus.publish({ type: 'session_update', data: { i } });
              if (busClosed) expect(envelope).toBeUndefined();
              else expect(envelope?.id).toBe(before + 1);
            }
          } else if (op.op === 'subscribe') {
            const last = bus.lastEventId;
            const cursor = op.cursor === undefined ? undefined : Math.max(0, last + op.cursor);
            const epoch = op.epoch === 'same' ? bus.epoch : op.epoch === 'other' ? 'stale-epoch' : undefined;
            const earliest = last === 0 ? undefined : Math.max(1, last - ringSize + 1);
            const full = open().length >= maxSubscribers;
            if (full) {
              expect(() => bus.subscribe({ lastEventId: cursor, epoch, maxQueued: op.maxQueued })).toThrow(
                SubscriberLimitExceededError,
              );
              continue;
            }
            let expectedResync: Reader['expectedResync'];
            if (cursor !== undefined && (op.epoch === 'other' || cursor > last))
              expectedResync = 'epoch_reset';
            else if (cursor !== undefined && earliest !== undefined && earliest > cursor + 1)
              expectedResync = 'ring_evicted';
            readers.push({
              subscription: bus.subscribe({ lastEventId: cursor, epoch, maxQueued: op.maxQueued }),
              maxQueued: op.maxQueued,
              nextId: cursor === undefined ? last + 1 : cursor + 1,
              inReplay: cursor !== undefined,
              expectedResync,
              framesRead: 0,
              replayed: 0,
              lastReplayed: undefined,
              mayWarn: true,
              evicted: false,
              unsubscribed: false,
            });
          } else if (op.op === 'read' || op.op === 'unsubscribe') {
            const reader = readers.length === 0 ? undefined : readers[op.pick % readers.length];
            if (!reader) continue;
            if (op.op === 'read') read(reader, op.count);
            else {
              reader.subscription.close();
              reader.unsubscribed = true;
            }
          } else {
            bus.close('test');
            busClosed = true;
          }

          // invariants after every step
          expect(bus.retainedEvents).toBe(Math.min(bus.lastEventId, ringSize));
          expect(bus.subscriberCount).toBe(open().length);
          expect(bus.subscriberCount).toBeLessThanOrEqual(maxSubscribers);
          for (const reader of readers) {
            expect(reader.subscription.queuedEvents).toBeLessThanOrEqual(reader.maxQueued);
            // at most one unread warning and one client_evicted beyond the events
            expect(reader.subscription.queuedFrames).toBeLessThanOrEqual(reader.maxQueued + 2);
          }
        }

        // read everything that is left: every reader that was neither evicted nor closed has
        // received every event up to the last one, and ends exactly when the bus closed
        for (const reader of readers) {
          read(reader, Number.MAX_SAFE_INTEGER);
          if (reader.unsubscribed) {
            expect(reader.subscription.ended).toBe(true);
            continue;
          }
          if (reader.evicted) {
            expect(reader.subscription.endReason).toBe('evicted');
            expect(reader.subscription.ended).toBe(true);
            continue;
          }
          expect(reader.inReplay).toBe(false);
          expect(reader.nextId - 1).toBe(bus.lastEventId);
          expect(reader.subscription.ended).toBe(busClosed);
          expect(reader.subscription.endReason).toBe(busClosed ? 'bus_closed' : undefined);
        }
      },
    ),
    { numRuns: 150 },
  );
});
