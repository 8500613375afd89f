import { describe, expect, test } from 'vitest';
import {
  ACP_CANCEL_REQUEST,
  AcpEventTranslator,
  eventToAcpMessage,
  QWEN_NOTIFY,
} from '../../src/acp/event-translation.js';
import { OutboundMerger } from '../../src/acp/outbound-merger.js';
import { EventBus, syntheticFrame } from '../../src/events/index.js';

const translate = (open: Set<string>) => (frame: Parameters<typeof eventToAcpMessage>[0]) =>
  eventToAcpMessage(frame, (id) => open.has(id));

describe('session events as ACP messages (PROTOCOL §8)', () => {
  test('§8 session_update → session/update notification with the ACP params', () => {
    const bus = new EventBus();
    const sub = bus.subscribe({ lastEventId: 0 });
    bus.publish({
      type: 'session_update',
      data: { sessionId: 's', update: { sessionUpdate: 'agent_message_chunk' } },
    });
    sub.tryRead(); // replay_complete
    const frame = sub.tryRead()!;
    expect(eventToAcpMessage(frame, () => false)).toEqual({
      jsonrpc: '2.0',
      method: 'session/update',
      params: { sessionId: 's', update: { sessionUpdate: 'agent_message_chunk' } },
    });
  });

  test('§8 an open permission_request → session/request_permission whose id is the requestId', () => {
    const bus = new EventBus();
    const sub = bus.subscribe();
    const data = { requestId: 'r-1', sessionId: 's', toolCall: { toolCallId: 't' }, options: [] };
    bus.publish({ type: 'permission_request', data });
    const frame = sub.tryRead()!;
    expect(translate(new Set(['r-1']))(frame)).toMatchObject({
      id: 'r-1',
      method: 'session/request_permission',
      params: { sessionId: 's', toolCall: { toolCallId: 't' }, options: [] },
    });
    expect(translate(new Set())(frame)).toEqual({
      jsonrpc: '2.0',
      method: QWEN_NOTIFY,
      params: { kind: 'permission_request', data },
    });
  });

  test('§8 other events and synthetic frames → _qwen/notify {kind, data}', () => {
    const frame = syntheticFrame('replay_complete', { replayedCount: 0 }, 1);
    expect(eventToAcpMessage(frame, () => false)).toEqual({
      jsonrpc: '2.0',
      method: QWEN_NOTIFY,
      params: { kind: 'replay_complete', data: { replayedCount: 0 } },
    });
  });
});

describe('OutboundMerger', () => {
  test('§8 a session event published before a response is written before it', async () => {
    const bus = new EventBus();
    const merger = new OutboundMerger(translate(new Set()));
    merger.addSubscription(bus.subscribe());
    bus.publish({ type: 'turn_complete', data: { stopReason: 'end_turn' } });
    merger.push({ jsonrpc: '2.0', id: 1, result: { stopReason: 'end_turn' } });
    const first = await merger.next();
    const second = await merger.next();
    expect(first).toMatchObject({ eventId: 1, message: { method: QWEN_NOTIFY } });
    expect(second).toEqual({ message: { jsonrpc: '2.0', id: 1, result: { stopReason: 'end_turn' } } });
  });

  test('§8 a waiting reader is woken by an event and by a direct message', async () => {
    const bus = new EventBus();
    const merger = new OutboundMerger(translate(new Set()));
    merger.addSubscription(bus.subscribe());
    const waiting = merger.next();
    bus.publish({ type: 'x', data: {} });
    expect(await waiting).toMatchObject({ eventId: 1 });
    const again = merger.next();
    merger.push({ jsonrpc: '2.0', id: 2, result: null });
    expect(await again).toEqual({ message: { jsonrpc: '2.0', id: 2, result: null } });
  });

  test('§8 / issue 19 item 17: replacing one session subscription (a reload) writes no frame twice', async () => {
    const bus = new EventBus();
    const other = new EventBus();
    const merger = new OutboundMerger(translate(new Set()));
    const first = bus.subscribe();
    merger.addSubscription(first);
    merger.addSubscription(other.subscribe());
    // The writer leaves after the merger had read a frame from the bus but before handing it out.
    let detached = false;
    const reading = merger.next(() => detached);
    detached = true;
    bus.publish({ type: 'turn_complete', data: { stopReason: 'end_turn' } });
    await expect(reading).resolves.toBeUndefined();
    // session/load: the session's subscription is replaced by one replaying its history.
    merger.replaceOne(first, bus.subscribe({ lastEventId: 0 }));
    other.publish({ type: 'turn_complete', data: { stopReason: 'cancelled' } });
    const written: Array<{ kind: string; data: unknown }> = [];
    for (let i = 0; i < 3; i++)
      written.push((await merger.next())?.message as unknown as { kind: string; data: unknown });
    const kinds = written.map((m) => (m as unknown as { params: { kind: string; data: unknown } }).params);
    // The reloaded session's frame once (from the replay), and the other session's frame.
    expect(kinds.filter((k) => JSON.stringify(k.data) === '{"stopReason":"end_turn"}')).toHaveLength(1);
    expect(kinds.map((k) => k.kind).sort()).toEqual(['replay_complete', 'turn_complete', 'turn_complete']);
    await expect(Promise.race([merger.next(), Promise.resolve('nothing more')])).resolves.toBe(
      'nothing more',
    );
    expect(first.ended).toBe(true);
    merger.close();
  });

  test('§8 a session stream waits for unanswered requests of its session before it ends', async () => {
    const bus = new EventBus();
    let unanswered = 1;
    const merger = new OutboundMerger(translate(new Set()), () => unanswered === 0);
    merger.addSubscription(bus.subscribe());
    bus.close();
    const ending = merger.next();
    let ended = false;
    void ending.then(() => (ended = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(ended).toBe(false);
    unanswered = 0;
    merger.push({ jsonrpc: '2.0', id: 9, result: {} });
    expect(await ending).toEqual({ message: { jsonrpc: '2.0', id: 9, result: {} } });
    expect(await merger.next()).toBeUndefined();
  });

  test('§8 a session stream ends after its bus closed and its direct messages were read', async () => {
    const bus = new EventBus();
    const merger = new OutboundMerger(translate(new Set()), () => true);
    merger.addSubscription(bus.subscribe());
    merger.push({ jsonrpc: '2.0', id: 3, result: null });
    bus.publish({ type: 'session_closed', data: {} });
    bus.close();
    expect(await merger.next()).toMatchObject({ eventId: 1 });
    expect(await merger.next()).toMatchObject({ message: { id: 3 } });
    expect(await merger.next()).toBeUndefined();
  });

  test('§8 close wakes the reader with undefined and releases the subscription', async () => {
    const bus = new EventBus();
    const merger = new OutboundMerger(translate(new Set()));
    merger.addSubscription(bus.subscribe());
    const waiting = merger.next();
    merger.close();
    expect(await waiting).toBeUndefined();
    expect(bus.subscriberCount).toBe(0);
  });

  test('§6 a reader that never reads is evicted by the bus, not buffered by the merger', async () => {
    const bus = new EventBus();
    const merger = new OutboundMerger(translate(new Set()), () => true);
    merger.addSubscription(bus.subscribe({ maxQueued: 16 }));
    for (let i = 0; i < 100; i++) bus.publish({ type: 'x', data: { i } });
    const kinds: string[] = [];
    for (let item = await merger.next(); item !== undefined; item = await merger.next())
      kinds.push((item.message as { params: { kind: string } }).params.kind);
    expect(kinds.length).toBeLessThanOrEqual(18);
    expect(kinds.at(-1)).toBe('client_evicted');
  });
});

describe('AcpEventTranslator (issue 19 item 17)', () => {
  const asked = (bus: EventBus, requestId: string) =>
    bus.publish({
      type: 'permission_request',
      data: { requestId, sessionId: 's', toolCall: { toolCallId: requestId }, options: [] },
    });
  const resolved = (bus: EventBus, requestId: string) =>
    bus.publish({ type: 'permission_resolved', data: { requestId, sessionId: 's', reason: 'vote' } });

  test('remembers at most 1024 questions asked here: the oldest is forgotten, never withdrawn', () => {
    const bus = new EventBus({ ringSize: 4096 });
    const translator = new AcpEventTranslator(() => true);
    for (let i = 0; i <= 1024; i++) asked(bus, `r-${i}`);
    resolved(bus, 'r-0'); // the 1025th question pushed it out
    resolved(bus, 'r-1024');
    const sub = bus.subscribe({ lastEventId: 0 }); // read back through the replay
    const messages: unknown[] = [];
    for (let frame = sub.tryRead(); frame !== undefined; frame = sub.tryRead())
      messages.push(translator.translate(frame));
    const cancels = messages
      .flat()
      .filter((m) => (m as { method?: string }).method === ACP_CANCEL_REQUEST)
      .map((m) => (m as { params: { requestId: string } }).params.requestId);
    expect(cancels).toEqual(['r-1024']);
  });

  test('a question this client answered is not withdrawn from it', () => {
    const bus = new EventBus();
    const sub = bus.subscribe();
    const translator = new AcpEventTranslator(() => true);
    asked(bus, 'r-1');
    translator.translate(sub.tryRead()!);
    translator.answered('r-1');
    resolved(bus, 'r-1');
    expect(translator.translate(sub.tryRead()!)).not.toBeInstanceOf(Array);
  });
});
