import { describe, expect, test } from 'vitest';
import { PromptDeadlineExceededError, PromptQueueFullError } from '../../src/sessions/index.js';
import { EchoAgent, FakeClock, flush, openSession, setup, text } from './helpers.js';

describe('BP-5 prompt deadline', () => {
  test('BP-5 the deadline counts from admission: queue time is spent too', async () => {
    const { bridge, agent, sink, clock } = setup({ promptDeadlineMs: 1_000 });
    const sid = openSession(bridge);
    bridge.sendPrompt(sid, text('first'));
    const second = bridge.sendPrompt(sid, text('second')); // admitted at t=0, queued
    await flush();
    clock.advance(600);
    agent.current(sid).succeed();
    await flush();
    const turn = agent.current(sid);
    expect(turn.promptId).toBe(second.promptId); // started at t=600

    clock.advance(399);
    expect(sink.terminalsOf(second.promptId)).toHaveLength(0);
    clock.advance(1); // t=1000: 400 ms after it started, 1000 ms after admission
    expect(sink.terminalsOf(second.promptId)).toMatchObject([
      {
        type: 'turn_error',
        data: {
          sessionId: sid,
          promptId: second.promptId,
          code: 'prompt_deadline_exceeded',
          message: `Prompt "${second.promptId}" exceeded its deadline of 1000 ms`,
        },
      },
    ]);
    expect(turn.turn.signal.aborted).toBe(true);
    expect(turn.turn.signal.reason).toBeInstanceOf(PromptDeadlineExceededError);
    await expect(second.done).rejects.toBeInstanceOf(PromptDeadlineExceededError);
  });

  test('BP-5 on expiry turn_error comes first, then prompt_cancelled; the late agent result adds no terminal event', async () => {
    const { bridge, agent, sink, clock } = setup({ promptDeadlineMs: 500 });
    agent.onAbort = 'ignore';
    const sid = openSession(bridge);
    const admission = bridge.sendPrompt(sid, text('slow'));
    await flush();
    clock.advance(500);
    expect(sink.typesOf(admission.promptId)).toEqual(['session_update', 'turn_error', 'prompt_cancelled']);
    expect(sink.ofType('prompt_cancelled')[0]?.data).toEqual({
      sessionId: sid,
      promptId: admission.promptId,
      reason: 'deadline',
    });
    expect(bridge.pendingPromptCount(sid)).toBe(0);
    agent.current(sid).chunk('ignored after the terminal event');
    agent.current(sid).succeed();
    await flush();
    expect(sink.typesOf(admission.promptId)).toEqual(['session_update', 'turn_error', 'prompt_cancelled']);
    expect(bridge.conversation(sid)).toEqual([]);
  });

  test('BP-5 a prompt whose deadline passes while queued leaves the queue and never runs', async () => {
    const { bridge, agent, sink, clock } = setup({ promptDeadlineMs: 1_000 });
    const sid = openSession(bridge);
    bridge.sendPrompt(sid, text('hogs the runner'));
    const queued = bridge.sendPrompt(sid, text('waits'));
    await flush();
    clock.advance(1_000);
    expect(sink.typesOf(queued.promptId)).toEqual([
      'pending_prompt_added',
      'pending_prompt_completed',
      'turn_error',
    ]);
    expect(sink.ofType('pending_prompt_completed')[0]?.data).toMatchObject({ state: 'removed' });
    expect(bridge.pendingPrompts(sid)).toEqual([]);
    await flush();
    expect(agent.turns.map((turn) => turn.text)).toEqual(['hogs the runner']);
  });

  test('BP-5 the deadline applies only to admitted prompts: a rejected admission starts no timer', () => {
    const { bridge, clock } = setup({ promptDeadlineMs: 1_000, maxPendingPromptsPerSession: 1 });
    const sid = openSession(bridge);
    bridge.sendPrompt(sid, text('admitted'));
    expect(clock.pendingTimers).toBe(1);
    expect(() => bridge.sendPrompt(sid, text('rejected'))).toThrow(PromptQueueFullError);
    const controller = new AbortController();
    controller.abort();
    expect(() => bridge.sendPrompt(sid, text('aborted'), { signal: controller.signal })).toThrow();
    expect(clock.pendingTimers).toBe(1);
  });

  test('BP-5 the effective deadline is the minimum of the bridge setting and the request', async () => {
    const { bridge, sink, clock } = setup({ promptDeadlineMs: 1_000, maxPendingPromptsPerSession: 0 });
    const sid = openSession(bridge);
    const tighter = bridge.sendPrompt(sid, text('a'), { deadlineMs: 300 });
    const looser = bridge.sendPrompt(sid, text('b'), { deadlineMs: 5_000 });
    await flush();
    clock.advance(300);
    expect(sink.terminalsOf(tighter.promptId)).toMatchObject([
      { data: { code: 'prompt_deadline_exceeded' } },
    ]);
    clock.advance(699);
    expect(sink.terminalsOf(looser.promptId)).toHaveLength(0);
    clock.advance(1);
    expect(sink.terminalsOf(looser.promptId)).toMatchObject([{ data: { code: 'prompt_deadline_exceeded' } }]);
  });

  test('BP-5 without a bridge deadline the request deadline applies alone; without either there is none', async () => {
    const { bridge, sink, clock } = setup();
    const sid = openSession(bridge);
    const unbounded = bridge.sendPrompt(sid, text('a'));
    expect(clock.pendingTimers).toBe(0);
    const bounded = bridge.sendPrompt(sid, text('b'), { deadlineMs: 50 });
    expect(clock.pendingTimers).toBe(1);
    clock.advance(10_000);
    expect(sink.terminalsOf(unbounded.promptId)).toHaveLength(0);
    expect(sink.terminalsOf(bounded.promptId)).toMatchObject([
      { data: { code: 'prompt_deadline_exceeded' } },
    ]);
  });

  test('BP-5 at most one timer per prompt, cleared on every way out', async () => {
    const clock = new FakeClock(0);
    const { bridge, agent } = setup({ clock, promptDeadlineMs: 10_000, maxPendingPromptsPerSession: 0 });
    const sid = openSession(bridge);
    const completes = bridge.sendPrompt(sid, text('completes'));
    const fails = bridge.sendPrompt(sid, text('fails'));
    const cancelled = bridge.sendPrompt(sid, text('cancelled'));
    const removed = bridge.sendPrompt(sid, text('removed'));
    const closed = bridge.sendPrompt(sid, text('closed'));
    expect(clock.pendingTimers).toBe(5);
    await flush();
    agent.current(sid).succeed();
    await flush();
    agent.current(sid).fail(new Error('x'));
    await flush();
    expect(agent.current(sid).promptId).toBe(cancelled.promptId);
    bridge.cancel(sid);
    expect(bridge.removePendingPrompt(sid, removed.promptId)).toBe(true);
    await flush();
    expect(clock.pendingTimers).toBe(1);
    await bridge.closeSession(sid);
    expect(clock.pendingTimers).toBe(0);
    await expect(completes.done).resolves.toBeDefined();
    await expect(fails.done).rejects.toThrow('x');
    await expect(cancelled.done).resolves.toMatchObject({ stopReason: 'cancelled' });
    await expect(removed.done).resolves.toMatchObject({ stopReason: 'cancelled' });
    await expect(closed.done).rejects.toMatchObject({ code: 'session_closed' });
  });

  test('BP-5 an echo agent finishing before the deadline clears it', async () => {
    const clock = new FakeClock(0);
    const { bridge, sink } = setup({ clock, agent: new EchoAgent(clock, 100), promptDeadlineMs: 1_000 });
    const sid = openSession(bridge);
    const admission = bridge.sendPrompt(sid, text('echo me'));
    await flush();
    clock.advance(100);
    await flush();
    expect(sink.terminalsOf(admission.promptId)).toMatchObject([
      { type: 'turn_complete', data: { stopReason: 'end_turn' } },
    ]);
    expect(clock.pendingTimers).toBe(0);
    clock.advance(5_000);
    expect(sink.terminalsOf(admission.promptId)).toHaveLength(1);
  });
});

describe('terminal event delay', () => {
  test('a terminal event decided by the agent waits until terminalEventDelayMs after admission', async () => {
    const { bridge, agent, sink, clock } = setup({ terminalEventDelayMs: 5 });
    const sid = openSession(bridge);
    const admission = bridge.sendPrompt(sid, text('quick'));
    await flush();
    agent.current(sid).succeed();
    await flush();
    expect(sink.terminalsOf(admission.promptId)).toHaveLength(0);
    expect(bridge.pendingPromptCount(sid)).toBe(1);
    expect(bridge.cancel(sid)).toBe(false);
    clock.advance(5);
    expect(sink.terminalsOf(admission.promptId)).toMatchObject([{ type: 'turn_complete' }]);
    expect(bridge.pendingPromptCount(sid)).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  test('a turn slower than the delay publishes at once; a close during the delay ends it as session_closed', async () => {
    const { bridge, agent, sink, clock } = setup({ terminalEventDelayMs: 5 });
    const sid = openSession(bridge);
    const slow = bridge.sendPrompt(sid, text('slow'));
    await flush();
    clock.advance(10);
    agent.current(sid).succeed();
    await flush();
    expect(sink.terminalsOf(slow.promptId)).toHaveLength(1);

    const quick = bridge.sendPrompt(sid, text('quick'));
    await flush();
    agent.current(sid).succeed();
    await flush();
    await bridge.closeSession(sid);
    expect(sink.terminalsOf(quick.promptId)).toMatchObject([
      { type: 'turn_error', data: { code: 'session_closed' } },
    ]);
    expect(clock.pendingTimers).toBe(0);
  });
});
