import { describe, expect, test } from 'vitest';
import {
  DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION,
  InvalidClientIdError,
  InvalidDeadlineError,
  InvalidPromptError,
  PromptAbortedError,
  PromptQueueFullError,
  SessionBridge,
  SessionClosingError,
  SessionNotFoundError,
  type ContentBlock,
} from '../../src/sessions/index.js';
import { FakeClock, RecordingSink, flush, openSession, setup, text } from './helpers.js';

describe('BP-1 pending prompts per session', () => {
  test('BP-1 the limit counts the running prompt and the queued ones', async () => {
    const { bridge, agent } = setup({ maxPendingPromptsPerSession: 2 });
    const sid = openSession(bridge);
    bridge.sendPrompt(sid, text('one'));
    bridge.sendPrompt(sid, text('two'));
    await flush();
    expect(agent.running).toHaveLength(1);
    expect(bridge.pendingPromptCount(sid)).toBe(2);
    expect(() => bridge.sendPrompt(sid, text('three'))).toThrow(PromptQueueFullError);

    agent.current(sid).succeed();
    await flush();
    expect(bridge.pendingPromptCount(sid)).toBe(1);
    expect(bridge.sendPrompt(sid, text('three')).queued).toBe(true);
    expect(bridge.pendingPromptCount(sid)).toBe(2);
  });

  test('BP-1 the default limit is 5', () => {
    const { bridge } = setup();
    const sid = openSession(bridge);
    for (let index = 0; index < DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION; index++)
      bridge.sendPrompt(sid, text(`p${index}`));
    expect(bridge.maxPendingPromptsPerSession).toBe(5);
    expect(() => bridge.sendPrompt(sid, text('sixth'))).toThrow(
      expect.objectContaining({ code: 'prompt_queue_full', limit: 5, pendingCount: 5 }),
    );
  });

  test('BP-1 each session has its own limit', () => {
    const { bridge } = setup({ maxPendingPromptsPerSession: 1 });
    const first = openSession(bridge);
    const second = openSession(bridge);
    bridge.sendPrompt(first, text('a'));
    expect(() => bridge.sendPrompt(first, text('b'))).toThrow(PromptQueueFullError);
    expect(() => bridge.sendPrompt(second, text('c'))).not.toThrow();
  });
});

describe('BP-2 limit semantics', () => {
  test.each([0, Infinity])('BP-2 %s means unlimited', (limit) => {
    const { bridge } = setup({ maxPendingPromptsPerSession: limit });
    const sid = openSession(bridge);
    for (let index = 0; index < 200; index++) bridge.sendPrompt(sid, text(`p${index}`));
    expect(bridge.pendingPromptCount(sid)).toBe(200);
    expect(bridge.maxPendingPromptsPerSession).toBeNull();
  });

  test.each([
    [-1, '-1'],
    [2.5, '2.5'],
    [NaN, 'NaN'],
    [-Infinity, '-Infinity'],
  ])('BP-2 %s is rejected at construction with the value in the message', (limit, shown) => {
    expect(() => setup({ maxPendingPromptsPerSession: limit })).toThrow(RangeError);
    expect(() => setup({ maxPendingPromptsPerSession: limit })).toThrow(
      `maxPendingPromptsPerSession must be a non-negative integer, 0 or Infinity (unlimited), got ${shown}`,
    );
  });
});

describe('BP-6 synchronous admission in order', () => {
  test('BP-6 sendPrompt is not async: it returns the promptId and publishes queue events before returning', () => {
    const { bridge, sink } = setup();
    const sid = openSession(bridge);
    const first = bridge.sendPrompt(sid, text('first'));
    expect(first).not.toBeInstanceOf(Promise);
    expect(first.promptId).toBe('id-3');
    expect(first.queued).toBe(false);
    expect(sink.typesOf(first.promptId)).toEqual(['session_update']);

    const second = bridge.sendPrompt(sid, text('second'));
    expect(second.queued).toBe(true);
    expect(sink.typesOf(second.promptId)).toEqual(['pending_prompt_added']);
    expect(sink.ofType('pending_prompt_added')[0]?.data).toEqual({
      sessionId: sid,
      promptId: second.promptId,
      text: 'second',
      queuedAt: expect.any(Number),
    });
  });

  test('BP-6 1. an unknown session is rejected as session_not_found, before the signal and the limit', () => {
    const { bridge } = setup();
    const controller = new AbortController();
    controller.abort();
    const call = (): unknown => bridge.sendPrompt('nope', text('x'), { signal: controller.signal });
    expect(call).toThrow(SessionNotFoundError);
    expect(call).toThrow(expect.objectContaining({ code: 'session_not_found', sessionId: 'nope' }));
    expect(call).toThrow('No session with id "nope"');
  });

  test('BP-6 1. a session being closed is rejected as session_closing', async () => {
    const { bridge, agent } = setup();
    const sid = openSession(bridge);
    agent.onAbort = 'ignore';
    bridge.sendPrompt(sid, text('busy'));
    await flush();
    void bridge.closeSession(sid);
    expect(() => bridge.sendPrompt(sid, text('late'))).toThrow(SessionClosingError);
    expect(() => bridge.sendPrompt(sid, text('late'))).toThrow(
      expect.objectContaining({ code: 'session_closing' }),
    );
  });

  test('BP-6 2. a pre-aborted signal is rejected before the pending counter moves', () => {
    const { bridge, sink, clock } = setup({ maxPendingPromptsPerSession: 1, promptDeadlineMs: 1_000 });
    const sid = openSession(bridge);
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    expect(() => bridge.sendPrompt(sid, text('x'), { signal: controller.signal })).toThrow(
      PromptAbortedError,
    );
    expect(bridge.pendingPromptCount(sid)).toBe(0);
    expect(sink.events).toHaveLength(0);
    expect(clock.pendingTimers).toBe(0);

    bridge.sendPrompt(sid, text('fills the only slot'));
    // Even on a full session the aborted signal is what is reported: step 2 comes before step 3.
    expect(() => bridge.sendPrompt(sid, text('x'), { signal: controller.signal })).toThrow(
      PromptAbortedError,
    );
    expect(bridge.pendingPromptCount(sid)).toBe(1);
  });

  test('BP-6 3. a full queue throws PromptQueueFullError with the exact message and fields, and nothing else', () => {
    const { bridge, sink, clock } = setup({ maxPendingPromptsPerSession: 2, promptDeadlineMs: 5_000 });
    const sid = openSession(bridge);
    bridge.sendPrompt(sid, text('a'));
    bridge.sendPrompt(sid, text('b'));
    const eventsBefore = sink.events.length;
    const timersBefore = clock.pendingTimers;
    let caught: unknown;
    try {
      bridge.sendPrompt(sid, text('c'));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PromptQueueFullError);
    const error = caught as PromptQueueFullError;
    expect(error.message).toBe(`Prompt queue full for session "${sid}" (2/2 pending)`);
    expect(error).toMatchObject({ code: 'prompt_queue_full', sessionId: sid, limit: 2, pendingCount: 2 });
    expect(error.retryable).toBe(true);
    expect(sink.events).toHaveLength(eventsBefore);
    expect(clock.pendingTimers).toBe(timersBefore);
    expect(bridge.pendingPromptCount(sid)).toBe(2);
  });

  test('BP-8 refusals of a full queue say the count that stands, also after it moved', async () => {
    const { bridge, agent } = setup({ maxPendingPromptsPerSession: 2 });
    const sid = openSession(bridge);
    bridge.sendPrompt(sid, text('a'));
    bridge.sendPrompt(sid, text('b'));
    const refusal = (): unknown => {
      try {
        bridge.sendPrompt(sid, text('refused'));
      } catch (error) {
        return error;
      }
      throw new Error('admitted');
    };
    const first = refusal();
    expect(refusal()).toMatchObject({ sessionId: sid, limit: 2, pendingCount: 2 });
    await flush();
    agent.current(sid).succeed();
    await flush();
    expect(bridge.pendingPromptCount(sid)).toBe(1);
    bridge.sendPrompt(sid, text('c'));
    expect(refusal()).toMatchObject({ sessionId: sid, limit: 2, pendingCount: 2 });
    expect((refusal() as Error).message).toBe((first as Error).message);
  });

  test('BP-8 trySendPrompt returns the refusal of a full queue instead of throwing it; nothing else changes', () => {
    const { bridge, sink } = setup({ maxPendingPromptsPerSession: 1 });
    const sid = openSession(bridge);
    const admitted = bridge.trySendPrompt(sid, text('a'));
    expect(admitted).not.toBeInstanceOf(PromptQueueFullError);
    const eventsBefore = sink.events.length;
    const refused = bridge.trySendPrompt(sid, text('b'));
    expect(refused).toBeInstanceOf(PromptQueueFullError);
    expect(refused).toMatchObject({ code: 'prompt_queue_full', sessionId: sid, limit: 1, pendingCount: 1 });
    expect(sink.events).toHaveLength(eventsBefore);
    expect(bridge.pendingPromptCount(sid)).toBe(1);
    // Every other refusal still throws, in the order of BP-6.
    expect(() => bridge.trySendPrompt('no-such-session', text('c'))).toThrow(SessionNotFoundError);
    expect(() => bridge.trySendPrompt(sid, [])).toThrow(InvalidPromptError);
  });

  test('BP-6 5. the slot is released exactly once, when the caller-visible promise settles', async () => {
    const { bridge, agent } = setup({ maxPendingPromptsPerSession: 1 });
    const sid = openSession(bridge);
    const admission = bridge.sendPrompt(sid, text('a'));
    await flush();
    let countWhenSettled = -1;
    void admission.done.then(() => (countWhenSettled = bridge.pendingPromptCount(sid)));
    agent.current(sid).succeed();
    await flush();
    expect(countWhenSettled).toBe(0);
    // Later calls on the finished prompt release nothing more.
    expect(bridge.removePendingPrompt(sid, admission.promptId)).toBe(false);
    expect(bridge.cancel(sid)).toBe(false);
    expect(bridge.pendingPromptCount(sid)).toBe(0);
    bridge.sendPrompt(sid, text('b'));
    expect(bridge.pendingPromptCount(sid)).toBe(1);
    expect(() => bridge.sendPrompt(sid, text('c'))).toThrow(PromptQueueFullError);
  });

  test('BP-6 a failing prompt releases its slot once and its caller gets the rejection', async () => {
    const { bridge, agent } = setup({ maxPendingPromptsPerSession: 1 });
    const sid = openSession(bridge);
    const admission = bridge.sendPrompt(sid, text('a'));
    await flush();
    const failure = Object.assign(new Error('boom'), { code: 'model_overloaded' });
    agent.current(sid).fail(failure);
    await expect(admission.done).rejects.toBe(failure);
    expect(bridge.pendingPromptCount(sid)).toBe(0);
  });

  test('BP-6 a prompt from a client id not registered on the session is rejected; a malformed one too', () => {
    const { bridge } = setup();
    const sid = openSession(bridge, 'client-a');
    expect(() => bridge.sendPrompt(sid, text('x'), { clientId: 'client-b' })).toThrow(InvalidClientIdError);
    expect(() => bridge.sendPrompt(sid, text('x'), { clientId: 'bad id!' })).toThrow(
      expect.objectContaining({ code: 'invalid_client_id' }),
    );
    expect(bridge.pendingPromptCount(sid)).toBe(0);
    const admission = bridge.sendPrompt(sid, text('x'), { clientId: 'client-a' });
    expect(bridge.pendingPrompts(sid)[0]).toMatchObject({
      promptId: admission.promptId,
      originatorClientId: 'client-a',
    });
  });

  test('BP-6 malformed prompts and deadlines are rejected before anything is counted', () => {
    const { bridge } = setup();
    const sid = openSession(bridge);
    expect(() => bridge.sendPrompt(sid, [])).toThrow(InvalidPromptError);
    expect(() => bridge.sendPrompt(sid, 'hi' as unknown as ContentBlock[])).toThrow(InvalidPromptError);
    expect(() => bridge.sendPrompt(sid, [null as unknown as ContentBlock])).toThrow(InvalidPromptError);
    for (const deadlineMs of [0, -5, 1.5, NaN, 2 ** 31])
      expect(() => bridge.sendPrompt(sid, text('x'), { deadlineMs })).toThrow(InvalidDeadlineError);
    expect(() => bridge.sendPrompt(sid, text('x'), { deadlineMs: 0 })).toThrow('got 0');
    expect(bridge.pendingPromptCount(sid)).toBe(0);
  });
});

describe('BP-9 capability value', () => {
  test('BP-9 the capability value is the limit, or null when unlimited', () => {
    expect(setup().bridge.limits.maxPendingPromptsPerSession).toBe(5);
    expect(setup({ maxPendingPromptsPerSession: 7 }).bridge.limits.maxPendingPromptsPerSession).toBe(7);
    expect(setup({ maxPendingPromptsPerSession: 0 }).bridge.limits.maxPendingPromptsPerSession).toBeNull();
    expect(setup({ maxPendingPromptsPerSession: Infinity }).bridge.maxPendingPromptsPerSession).toBeNull();
  });

  test('BP-9 the other session limits are reported alongside', () => {
    const { bridge } = setup({ maxSessionsPerWorkspace: 3, maxSessions: Infinity, promptDeadlineMs: 9_000 });
    expect(bridge.limits).toEqual({
      maxPendingPromptsPerSession: 5,
      maxSessionsPerWorkspace: 3,
      maxSessions: null,
      promptDeadlineMs: 9_000,
    });
    expect(setup().bridge.limits.promptDeadlineMs).toBeNull();
  });
});

describe('construction', () => {
  test.each([
    [{ promptDeadlineMs: 0 }, 'promptDeadlineMs must be an integer in [1, 2147483647], got 0'],
    [{ promptDeadlineMs: 2 ** 31 }, 'promptDeadlineMs must be an integer in [1, 2147483647], got 2147483648'],
    [{ maxSessions: 0 }, 'maxSessions must be a positive integer or Infinity, got 0'],
    [
      { maxSessionsPerWorkspace: 1.5 },
      'maxSessionsPerWorkspace must be a positive integer or Infinity, got 1.5',
    ],
    [{ maxClientsPerSession: Infinity }, 'maxClientsPerSession must be a positive integer, got Infinity'],
    [{ maxConversationMessages: -1 }, 'maxConversationMessages must be a positive integer, got -1'],
    [{ maxConversationBytes: NaN }, 'maxConversationBytes must be a positive integer, got NaN'],
    [{ terminalEventDelayMs: 5_000 }, 'terminalEventDelayMs must be an integer in [0, 1000], got 5000'],
    [{ workspaces: ['relative/path'] }, 'workspaces must hold absolute paths, got "relative/path"'],
  ])('invalid option %o is rejected with a message naming the value', (options, message) => {
    expect(
      () =>
        new SessionBridge({
          agent: { runTurn: async () => ({ stopReason: 'end_turn' }) },
          events: new RecordingSink(),
          clock: new FakeClock(),
          ...options,
        }),
    ).toThrow(message);
  });
});
