import { describe, expect, test } from 'vitest';
import { SessionClosedError, SessionClosingError, SessionNotFoundError } from '../../src/sessions/index.js';
import { flush, openSession, setup, text } from './helpers.js';

describe('cancel', () => {
  test('cancel aborts the running prompt only; it ends turn_complete cancelled and the queue goes on', async () => {
    const { bridge, agent, sink } = setup();
    const sid = openSession(bridge);
    const running = bridge.sendPrompt(sid, text('running'));
    const queued = bridge.sendPrompt(sid, text('queued'));
    await flush();
    const turn = agent.current(sid);
    expect(bridge.cancel(sid)).toBe(true);
    expect(turn.turn.signal.aborted).toBe(true);
    expect(sink.ofType('prompt_cancelled')).toMatchObject([
      { promptId: running.promptId, data: { sessionId: sid, promptId: running.promptId, reason: 'cancel' } },
    ]);
    await expect(running.done).resolves.toEqual({ promptId: running.promptId, stopReason: 'cancelled' });
    expect(sink.terminalsOf(running.promptId)).toMatchObject([
      { type: 'turn_complete', data: { stopReason: 'cancelled' } },
    ]);
    await flush();
    expect(agent.current(sid).promptId).toBe(queued.promptId);
    expect(sink.terminalsOf(queued.promptId)).toHaveLength(0);
  });

  test('an agent that throws on abort still ends turn_complete cancelled', async () => {
    const { bridge, agent, sink } = setup();
    agent.onAbort = 'reject';
    const sid = openSession(bridge);
    const admission = bridge.sendPrompt(sid, text('x'));
    await flush();
    bridge.cancel(sid);
    await expect(admission.done).resolves.toMatchObject({ stopReason: 'cancelled' });
    expect(sink.terminalsOf(admission.promptId)).toMatchObject([{ type: 'turn_complete' }]);
  });

  test('a cancel before the agent started skips the agent', async () => {
    const { bridge, agent, sink } = setup();
    const sid = openSession(bridge);
    const admission = bridge.sendPrompt(sid, text('x'));
    expect(bridge.cancel(sid)).toBe(true);
    await expect(admission.done).resolves.toMatchObject({ stopReason: 'cancelled' });
    expect(agent.turns).toHaveLength(0);
    expect(sink.terminalsOf(admission.promptId)).toHaveLength(1);
  });

  test('cancel with nothing running returns false and publishes nothing; twice is once', async () => {
    const { bridge, sink, agent } = setup();
    const sid = openSession(bridge);
    expect(bridge.cancel(sid)).toBe(false);
    expect(sink.events).toHaveLength(0);
    agent.onAbort = 'ignore';
    bridge.sendPrompt(sid, text('x'));
    await flush();
    expect(bridge.cancel(sid)).toBe(true);
    expect(bridge.cancel(sid)).toBe(false);
    expect(sink.ofType('prompt_cancelled')).toHaveLength(1);
    expect(() => bridge.cancel('unknown')).toThrow(SessionNotFoundError);
  });

  test('an abort of the caller signal after admission removes or cancels the prompt', async () => {
    const { bridge, agent, sink } = setup();
    const sid = openSession(bridge);
    const runningController = new AbortController();
    const queuedController = new AbortController();
    const running = bridge.sendPrompt(sid, text('a'), { signal: runningController.signal });
    const queued = bridge.sendPrompt(sid, text('b'), { signal: queuedController.signal });
    await flush();
    queuedController.abort();
    expect(sink.typesOf(queued.promptId)).toEqual([
      'pending_prompt_added',
      'pending_prompt_completed',
      'turn_complete',
    ]);
    runningController.abort();
    await expect(running.done).resolves.toMatchObject({ stopReason: 'cancelled' });
    expect(agent.turns).toHaveLength(1);
  });
});

describe('removePendingPrompt', () => {
  test('a queued prompt leaves at once: pending_prompt_completed removed, then turn_complete cancelled, as the reference orders them', async () => {
    const { bridge, agent, sink } = setup();
    const sid = openSession(bridge);
    bridge.sendPrompt(sid, text('running'));
    const first = bridge.sendPrompt(sid, text('q1'));
    const second = bridge.sendPrompt(sid, text('q2'));
    const third = bridge.sendPrompt(sid, text('q3'));
    expect(bridge.removePendingPrompt(sid, second.promptId)).toBe(true);
    expect(bridge.pendingPromptCount(sid)).toBe(3);
    expect(sink.typesOf(second.promptId)).toEqual([
      'pending_prompt_added',
      'pending_prompt_completed',
      'turn_complete',
    ]);
    expect(sink.terminalsOf(second.promptId)[0]?.data).toEqual({
      sessionId: sid,
      promptId: second.promptId,
      stopReason: 'cancelled',
    });
    expect(sink.ofType('pending_prompt_completed')[0]?.data).toEqual({
      sessionId: sid,
      promptId: second.promptId,
      state: 'removed',
    });
    await expect(second.done).resolves.toMatchObject({ stopReason: 'cancelled' });
    expect(bridge.pendingPrompts(sid).map((prompt) => [prompt.promptId, prompt.state])).toEqual([
      [expect.any(String), 'running'],
      [first.promptId, 'queued'],
      [third.promptId, 'queued'],
    ]);
    expect(bridge.removePendingPrompt(sid, second.promptId)).toBe(false);
    expect(bridge.removePendingPrompt(sid, 'never-admitted')).toBe(false);

    for (let index = 0; index < 3; index++) {
      await flush();
      agent.current(sid).succeed();
    }
    await flush();
    expect(agent.turns.map((turn) => turn.text)).toEqual(['running', 'q1', 'q3']);
  });

  test('removing the running prompt aborts it like a cancel', async () => {
    const { bridge, agent, sink } = setup();
    const sid = openSession(bridge);
    const running = bridge.sendPrompt(sid, text('running'));
    await flush();
    expect(bridge.removePendingPrompt(sid, running.promptId)).toBe(true);
    expect(agent.turns[0]?.turn.signal.aborted).toBe(true);
    await expect(running.done).resolves.toMatchObject({ stopReason: 'cancelled' });
    expect(sink.typesOf(running.promptId)).toEqual(['session_update', 'prompt_cancelled', 'turn_complete']);
  });

  test('pendingPrompts lists the running prompt first, then the queue in order, with metadata', async () => {
    const { bridge } = setup();
    const sid = openSession(bridge, 'cli');
    const a = bridge.sendPrompt(sid, text('a'), { clientId: 'cli' });
    const b = bridge.sendPrompt(sid, [
      { type: 'text', text: 'b1' },
      { type: 'image', data: '…' },
      { type: 'text', text: 'b2' },
    ]);
    expect(bridge.pendingPrompts(sid)).toEqual([
      {
        promptId: a.promptId,
        text: 'a',
        queuedAt: expect.any(Number),
        state: 'running',
        originatorClientId: 'cli',
      },
      { promptId: b.promptId, text: 'b1\nb2', queuedAt: expect.any(Number), state: 'queued' },
    ]);
  });
});

describe('closeSession', () => {
  test('every pending prompt ends turn_error session_closed, running first, then session_closed', async () => {
    const { bridge, agent, sink } = setup();
    const sid = openSession(bridge, 'owner');
    const running = bridge.sendPrompt(sid, text('running'));
    const queued1 = bridge.sendPrompt(sid, text('q1'));
    const queued2 = bridge.sendPrompt(sid, text('q2'));
    await flush();
    sink.clear();
    const closed = bridge.closeSession(sid, { reason: 'client_close', clientId: 'owner' });
    expect(sink.events.map((event) => [event.type, event.promptId])).toEqual([
      ['turn_error', running.promptId],
      ['pending_prompt_completed', queued1.promptId],
      ['turn_error', queued1.promptId],
      ['pending_prompt_completed', queued2.promptId],
      ['turn_error', queued2.promptId],
      ['session_closed', undefined],
    ]);
    expect(sink.events[0]?.data).toEqual({
      sessionId: sid,
      promptId: running.promptId,
      message: `Session "${sid}" was closed (client_close)`,
      code: 'session_closed',
      // Sending it again cannot succeed: the session is gone (issue 19 item 10).
      retryable: false,
    });
    expect(sink.events.at(-1)).toMatchObject({
      data: { sessionId: sid, reason: 'client_close', closedBy: 'owner' },
      originatorClientId: 'owner',
    });
    expect(agent.turns[0]?.turn.signal.reason).toBeInstanceOf(SessionClosedError);
    for (const admission of [running, queued1, queued2])
      await expect(admission.done).rejects.toBeInstanceOf(SessionClosedError);
    await closed;
    expect(() => bridge.status(sid)).toThrow(SessionNotFoundError);
    expect(agent.turns).toHaveLength(1);
  });

  test('the session answers session_closing until its running agent returned', async () => {
    const { bridge, agent, sink } = setup();
    agent.onAbort = 'ignore';
    const sid = openSession(bridge);
    bridge.sendPrompt(sid, text('stubborn'));
    await flush();
    let closed = false;
    void bridge.closeSession(sid).then(() => (closed = true));
    await flush();
    expect(closed).toBe(false);
    expect(() => bridge.status(sid)).toThrow(SessionClosingError);
    expect(() => bridge.branchSession(sid)).toThrow(expect.objectContaining({ code: 'session_closing' }));
    expect(bridge.cancel.bind(bridge, sid)).toThrow(SessionClosingError);
    const again = bridge.closeSession(sid); // idempotent: the same close
    agent.current(sid).succeed();
    await again;
    expect(closed).toBe(true);
    expect(sink.ofType('session_closed')).toHaveLength(1);
    expect(() => bridge.closeSession(sid)).toThrow(SessionNotFoundError);
  });

  test('closing an idle session closes it at once; the default session of the workspace is replaced', async () => {
    const { bridge, sink } = setup();
    const first = bridge.createSession({ cwd: '/work' });
    await bridge.closeSession(first.sessionId);
    expect(sink.ofType('session_closed')).toMatchObject([{ data: { reason: 'client_close' } }]);
    const second = bridge.createSession({ cwd: '/work' });
    expect(second.sessionId).not.toBe(first.sessionId);
    expect(second.attached).toBe(false);
  });

  test('shutdown closes every session and refuses new ones', async () => {
    const { bridge, sink } = setup();
    const a = openSession(bridge);
    const b = openSession(bridge);
    const prompt = bridge.sendPrompt(a, text('x'));
    await bridge.shutdown();
    expect(bridge.sessionCount).toBe(0);
    expect(sink.ofType('session_closed').map((event) => [event.sessionId, event.data['reason']])).toEqual([
      [a, 'daemon_shutdown'],
      [b, 'daemon_shutdown'],
    ]);
    await expect(prompt.done).rejects.toMatchObject({ code: 'session_closed' });
    expect(() => bridge.createSession({ cwd: '/work' })).toThrow(
      expect.objectContaining({ code: 'bridge_shutting_down' }),
    );
  });
});
