import { describe, expect, test } from 'vitest';
import { SessionBuses } from '../../src/sessions/index.js';
import { SESSION_EVENT } from '../../src/sessions/session-events.js';

function closeSession(buses: SessionBuses, sessionId: string): void {
  buses.publish(sessionId, {
    type: SESSION_EVENT.sessionClosed,
    data: { sessionId, reason: 'client_close' },
  });
}

describe('closed sessions stay replayable briefly and boundedly (PROTOCOL §6)', () => {
  test('a closed bus replays its events, then ends; it expires after the retention window', () => {
    let now = 1_000;
    const buses = new SessionBuses(100, () => {}, { ms: 60_000, maxSessions: 8, now: () => now });
    buses.publish('s1', {
      type: 'turn_error',
      data: { sessionId: 's1', promptId: 'p1', code: 'session_closed' },
    });
    closeSession(buses, 's1');
    expect(buses.has('s1')).toBe(false);

    const bus = buses.closedBus('s1');
    expect(bus?.isClosed).toBe(true);
    const subscription = bus!.subscribe({ lastEventId: 0 });
    const types: string[] = [];
    for (let frame = subscription.tryRead(); frame !== undefined; frame = subscription.tryRead())
      types.push(frame.type);
    expect(types).toEqual(['turn_error', 'session_closed', 'replay_complete']);
    expect(subscription.ended).toBe(true);

    now += 59_999;
    expect(buses.closedBus('s1')).toBe(bus);
    now += 1;
    expect(buses.closedBus('s1')).toBeUndefined();
  });

  test('at most maxSessions closed buses are kept, the oldest dropped first; a restored session starts fresh', () => {
    const buses = new SessionBuses(100, () => {}, { ms: 60_000, maxSessions: 2, now: () => 0 });
    for (const id of ['a', 'b', 'c']) {
      buses.busFor(id);
      closeSession(buses, id);
    }
    expect(buses.closedBus('a')).toBeUndefined();
    expect(buses.closedBus('b')).toBeDefined();
    expect(buses.closedBus('c')).toBeDefined();

    const revived = buses.busFor('c');
    expect(revived.isClosed).toBe(false);
    expect(buses.closedBus('c')).toBeUndefined();
  });

  test('retention 0 keeps nothing', () => {
    const buses = new SessionBuses(100, () => {}, { ms: 0, maxSessions: 8, now: () => 0 });
    closeSession(buses, 's');
    expect(buses.closedBus('s')).toBeUndefined();
  });
});
