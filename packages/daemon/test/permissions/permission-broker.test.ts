import { describe, expect, test } from 'vitest';
import {
  InvalidOptionIdError,
  InvalidPermissionOutcomeError,
  InvalidPermissionRequestError,
  PermissionBroker,
  PermissionLimitExceededError,
  PermissionRequestNotFoundError,
  type PermissionBrokerOptions,
} from '../../src/permissions/index.js';
import type { PermissionOutcome, PermissionRequest } from '../../src/sessions/agent.js';
import { FakeClock, RecordingSink, flush } from '../sessions/helpers.js';

const SID = 'session-1';

const ASK: PermissionRequest = {
  toolCall: { toolCallId: 'call-1', title: 'rm -rf build', kind: 'execute' },
  options: [
    { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
    { optionId: 'always', name: 'Always allow', kind: 'allow_always' },
    { optionId: 'never', name: 'Never', kind: 'reject_always' },
    { optionId: 'deny', name: 'Deny', kind: 'reject_once' },
  ],
};

function setup(options: Partial<PermissionBrokerOptions> = {}) {
  const clock = new FakeClock();
  const sink = new RecordingSink();
  let next = 0;
  const broker = new PermissionBroker({ events: sink, clock, newId: () => `req-${++next}`, ...options });
  return { clock, sink, broker };
}

/** Records how a request settled, so a test can tell "still open" from "resolved". */
function track(promise: Promise<PermissionOutcome>): { outcome: PermissionOutcome | undefined } {
  const box: { outcome: PermissionOutcome | undefined } = { outcome: undefined };
  void promise.then((outcome) => (box.outcome = outcome));
  return box;
}

describe('PermissionBroker (PROTOCOL §7)', () => {
  test('§7 a request is published as permission_request with the offered options and the prompt id', () => {
    const { broker, sink } = setup();
    void broker.request(SID, ASK, { promptId: 'p-1' });
    const [event] = sink.ofType('permission_request', SID);
    expect(event?.promptId).toBe('p-1');
    expect(event?.data).toEqual({
      requestId: 'req-1',
      sessionId: SID,
      toolCall: ASK.toolCall,
      options: ASK.options,
    });
    expect(broker.openFor(SID).map((request) => request.requestId)).toEqual(['req-1']);
  });

  test('§7 first responder wins: the first valid vote resolves, a second vote is not found', async () => {
    const { broker, sink } = setup();
    const result = track(broker.request(SID, ASK));
    broker.vote('req-1', { outcome: 'selected', optionId: 'allow' }, { sessionId: SID, clientId: 'web' });
    expect(() => broker.vote('req-1', { outcome: 'selected', optionId: 'deny' }, { sessionId: SID })).toThrow(
      PermissionRequestNotFoundError,
    );
    await flush();
    expect(result.outcome).toEqual({ outcome: 'selected', optionId: 'allow' });
    const resolved = sink.ofType('permission_resolved', SID);
    expect(resolved).toHaveLength(1);
    expect(resolved[0]?.data).toMatchObject({
      requestId: 'req-1',
      outcome: { outcome: 'selected', optionId: 'allow' },
      reason: 'vote',
      voterClientId: 'web',
    });
  });

  test('§7 a late vote on a resolved request publishes permission_already_resolved with the outcome', () => {
    const { broker, sink } = setup();
    void broker.request(SID, ASK);
    broker.vote('req-1', { outcome: 'cancelled' });
    expect(() => broker.vote('req-1', { outcome: 'selected', optionId: 'allow' })).toThrow(
      PermissionRequestNotFoundError,
    );
    expect(sink.ofType('permission_already_resolved', SID).map((event) => event.data)).toEqual([
      { requestId: 'req-1', sessionId: SID, outcome: { outcome: 'cancelled' } },
    ]);
  });

  test('§7 a vote for an id never asked is not found and publishes nothing', () => {
    const { broker, sink } = setup();
    expect(() => broker.vote('nope', { outcome: 'cancelled' })).toThrow(PermissionRequestNotFoundError);
    expect(sink.events).toEqual([]);
  });

  test('§7 a vote naming another session is not found, and the request stays open', () => {
    const { broker } = setup();
    void broker.request(SID, ASK);
    expect(() => broker.vote('req-1', { outcome: 'cancelled' }, { sessionId: 'other' })).toThrow(
      PermissionRequestNotFoundError,
    );
    expect(broker.isOpen('req-1')).toBe(true);
  });

  test('§7 an option that was not offered is invalid_option_id and the request stays open', () => {
    const { broker } = setup();
    void broker.request(SID, ASK);
    expect(() => broker.vote('req-1', { outcome: 'selected', optionId: 'sudo' })).toThrow(
      InvalidOptionIdError,
    );
    expect(broker.isOpen('req-1')).toBe(true);
  });

  test.each([
    ['no outcome', undefined],
    ['a string', 'allow'],
    ['an unknown outcome', { outcome: 'approved' }],
    ['selected without optionId', { outcome: 'selected' }],
    ['a non-string optionId', { outcome: 'selected', optionId: 7 }],
  ])('§7 a malformed outcome (%s) is invalid_permission_outcome', (_name, outcome) => {
    const { broker } = setup();
    void broker.request(SID, ASK);
    expect(() => broker.vote('req-1', outcome)).toThrow(InvalidPermissionOutcomeError);
    expect(broker.isOpen('req-1')).toBe(true);
  });

  test('§7 a timeout picks reject_once, never cancelled', async () => {
    const { broker, clock, sink } = setup({ responseTimeoutMs: 1000 });
    const result = track(broker.request(SID, ASK));
    clock.advance(999);
    await flush();
    expect(result.outcome).toBeUndefined();
    clock.advance(1);
    await flush();
    expect(result.outcome).toEqual({ outcome: 'selected', optionId: 'deny' });
    expect(sink.ofType('permission_resolved', SID)[0]?.data).toMatchObject({ reason: 'timeout' });
  });

  test('§7 a timeout without reject_once picks another reject_* option', async () => {
    const { broker, clock } = setup({ responseTimeoutMs: 10 });
    const result = track(
      broker.request(SID, { toolCall: {}, options: ASK.options.filter((o) => o.kind !== 'reject_once') }),
    );
    clock.advance(10);
    await flush();
    expect(result.outcome).toEqual({ outcome: 'selected', optionId: 'never' });
  });

  test('§7 without any reject option a timeout leaves the request open (never cancelled)', async () => {
    const { broker, clock } = setup({ responseTimeoutMs: 10 });
    const result = track(broker.request(SID, { toolCall: {}, options: [ASK.options[0]!] }));
    clock.advance(1000);
    await flush();
    expect(result.outcome).toBeUndefined();
    expect(broker.isOpen('req-1')).toBe(true);
  });

  test('§7 responseTimeoutMs 0 waits until a vote', async () => {
    const { broker, clock } = setup({ responseTimeoutMs: 0 });
    const result = track(broker.request(SID, ASK));
    clock.advance(10 * 60_000);
    await flush();
    expect(result.outcome).toBeUndefined();
    expect(clock.pendingTimers).toBe(0);
  });

  test('§7 a turn abort resolves the open request as cancelled; it can no longer be voted', async () => {
    const { broker, clock, sink } = setup({ responseTimeoutMs: 1000 });
    const controller = new AbortController();
    const result = track(broker.request(SID, ASK, { signal: controller.signal }));
    controller.abort();
    await flush();
    expect(result.outcome).toEqual({ outcome: 'cancelled' });
    expect(sink.ofType('permission_resolved', SID)[0]?.data).toMatchObject({ reason: 'turn_aborted' });
    expect(() => broker.vote('req-1', { outcome: 'selected', optionId: 'allow' })).toThrow(
      PermissionRequestNotFoundError,
    );
    expect(clock.pendingTimers).toBe(0);
  });

  test('§7 an already aborted turn gets cancelled without publishing a request', async () => {
    const { broker, sink } = setup();
    const controller = new AbortController();
    controller.abort();
    await expect(broker.request(SID, ASK, { signal: controller.signal })).resolves.toEqual({
      outcome: 'cancelled',
    });
    expect(sink.events).toEqual([]);
  });

  test('§7 open requests per session are capped; other sessions are unaffected', () => {
    const { broker, sink } = setup({ maxOpenPerSession: 2 });
    void broker.request(SID, ASK);
    void broker.request(SID, ASK);
    expect(() => broker.request(SID, ASK)).toThrow(PermissionLimitExceededError);
    expect(sink.ofType('permission_request', SID)).toHaveLength(2);
    void broker.request('session-2', ASK);
    broker.vote('req-1', { outcome: 'cancelled' });
    expect(() => broker.request(SID, ASK)).not.toThrow();
  });

  test('§7 the record of resolved ids is bounded: the oldest is forgotten first', () => {
    const { broker, sink } = setup({ maxResolvedRemembered: 2 });
    for (let i = 1; i <= 3; i++) {
      void broker.request(SID, ASK);
      broker.vote(`req-${i}`, { outcome: 'cancelled' });
    }
    sink.clear();
    expect(() => broker.vote('req-1', { outcome: 'cancelled' })).toThrow(PermissionRequestNotFoundError);
    expect(sink.ofType('permission_already_resolved')).toHaveLength(0);
    expect(() => broker.vote('req-2', { outcome: 'cancelled' })).toThrow(PermissionRequestNotFoundError);
    expect(sink.ofType('permission_already_resolved')).toHaveLength(1);
  });

  test.each([
    ['no options', { toolCall: {}, options: [] }],
    ['duplicate option ids', { toolCall: {}, options: [ASK.options[0], ASK.options[0]] }],
    ['an unknown kind', { toolCall: {}, options: [{ optionId: 'x', name: 'X', kind: 'maybe' }] }],
    ['no toolCall', { options: ASK.options }],
  ])('§7 an agent asking with %s gets InvalidPermissionRequestError and nothing is published', (_n, ask) => {
    const { broker, sink } = setup();
    expect(() => broker.request(SID, ask as unknown as PermissionRequest)).toThrow(
      InvalidPermissionRequestError,
    );
    expect(sink.events).toEqual([]);
  });

  test.each([
    [
      'responseTimeoutMs',
      { responseTimeoutMs: -1 },
      /permissionResponseTimeoutMs must be an integer in \[0, .*got -1/,
    ],
    ['responseTimeoutMs', { responseTimeoutMs: 1.5 }, /got 1.5/],
    ['maxOpenPerSession', { maxOpenPerSession: 0 }, /maxOpenPermissionsPerSession .* got 0/],
  ])('§7 an invalid %s is refused at construction, naming the value', (_name, options, message) => {
    expect(() => setup(options)).toThrow(message);
  });
});
