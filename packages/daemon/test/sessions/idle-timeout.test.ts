import { describe, expect, test } from 'vitest';
import { SESSION_EVENT, SessionNotFoundError } from '../../src/sessions/index.js';
import { flush, openSession, setup, text } from './helpers.js';

const TIMEOUT = 60_000;
// The sweep runs every quarter of the timeout: a session closes within 1.25 × the timeout.
const LATEST_CLOSE = TIMEOUT + TIMEOUT / 4;

describe('--session-idle-timeout-ms', () => {
  test('a session nobody uses is closed with reason idle_timeout, not before the timeout', async () => {
    const { bridge, clock, sink } = setup({ sessionIdleTimeoutMs: TIMEOUT });
    const sid = openSession(bridge);
    clock.advance(TIMEOUT - 1);
    await flush();
    expect(bridge.isOpen(sid)).toBe(true);
    clock.advance(LATEST_CLOSE - (TIMEOUT - 1));
    await flush();
    expect(() => bridge.status(sid)).toThrow(SessionNotFoundError);
    expect(sink.ofType(SESSION_EVENT.sessionClosed, sid).map((event) => event.data['reason'])).toEqual([
      'idle_timeout',
    ]);
  });

  test('a heartbeat or a prompt starts the countdown again', async () => {
    const { bridge, clock, agent } = setup({ sessionIdleTimeoutMs: TIMEOUT });
    const sid = openSession(bridge, 'client-1');
    clock.advance(TIMEOUT - 1_000);
    bridge.heartbeat(sid, 'client-1');
    clock.advance(TIMEOUT - 1_000);
    await flush();
    expect(bridge.isOpen(sid)).toBe(true);
    bridge.sendPrompt(sid, text('hello'));
    await flush();
    agent.current(sid).succeed();
    await flush();
    clock.advance(TIMEOUT - 1_000);
    await flush();
    expect(bridge.isOpen(sid)).toBe(true);
    clock.advance(LATEST_CLOSE);
    await flush();
    expect(bridge.isOpen(sid)).toBe(false);
  });

  test('a session with a pending prompt is never idle, however long the prompt runs', async () => {
    const { bridge, clock, agent } = setup({ sessionIdleTimeoutMs: TIMEOUT });
    const sid = openSession(bridge);
    bridge.sendPrompt(sid, text('long'));
    await flush();
    clock.advance(TIMEOUT * 10);
    await flush();
    expect(bridge.isOpen(sid)).toBe(true);
    agent.current(sid).succeed();
    await flush();
    // The countdown starts when the prompt ended, not when it was sent.
    clock.advance(TIMEOUT - TIMEOUT / 4 - 1);
    await flush();
    expect(bridge.isOpen(sid)).toBe(true);
    clock.advance(LATEST_CLOSE);
    await flush();
    expect(bridge.isOpen(sid)).toBe(false);
  });

  test('a session with an event-stream subscriber is never idle', async () => {
    const { bridge, clock } = setup({ sessionIdleTimeoutMs: TIMEOUT });
    const sid = openSession(bridge);
    const subscription = bridge.eventStream(sid).subscribe();
    clock.advance(TIMEOUT * 10);
    await flush();
    expect(bridge.isOpen(sid)).toBe(true);
    subscription.close();
    clock.advance(TIMEOUT + LATEST_CLOSE);
    await flush();
    expect(bridge.isOpen(sid)).toBe(false);
  });

  test('off by default: sessions stay open and no timer is set', async () => {
    const { bridge, clock } = setup();
    const sid = openSession(bridge);
    expect(clock.pendingTimers).toBe(0);
    clock.advance(TIMEOUT * 1_000);
    await flush();
    expect(bridge.isOpen(sid)).toBe(true);
  });

  test('shutdown stops the sweep', async () => {
    const { bridge, clock } = setup({ sessionIdleTimeoutMs: TIMEOUT });
    expect(clock.pendingTimers).toBe(1);
    await bridge.shutdown();
    expect(clock.pendingTimers).toBe(0);
  });

  test('a timeout that is not a non-negative integer of timer range is refused naming it', () => {
    for (const bad of [-1, 1.5, 2 ** 31])
      expect(() => setup({ sessionIdleTimeoutMs: bad })).toThrow(/sessionIdleTimeoutMs must be an integer/);
  });
});
