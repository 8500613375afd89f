import { describe, expect, test } from 'vitest';
import {
  BranchWhilePromptActiveError,
  PromptQueueFullError,
  SessionClosedError,
  type Agent,
  type TurnResult,
} from '../../src/sessions/index.js';
import {
  EchoAgent,
  FailingAgent,
  FakeClock,
  GatedStore,
  flush,
  openSession,
  setup,
  text,
} from './helpers.js';

describe('the per-session FIFO', () => {
  test('prompts run one at a time in arrival order; only queued ones get pending_prompt_* events', async () => {
    const { bridge, agent, sink } = setup();
    const sid = openSession(bridge);
    const first = bridge.sendPrompt(sid, text('one'));
    const second = bridge.sendPrompt(sid, text('two'));
    const third = bridge.sendPrompt(sid, text('three'));
    await flush();
    expect(agent.turns.map((turn) => turn.text)).toEqual(['one']);

    agent.current(sid).succeed();
    await flush();
    expect(agent.turns.map((turn) => turn.text)).toEqual(['one', 'two']);
    agent.current(sid).succeed();
    await flush();
    agent.current(sid).succeed();
    await flush();
    expect(agent.turns.map((turn) => turn.promptId)).toEqual([
      first.promptId,
      second.promptId,
      third.promptId,
    ]);

    expect(sink.typesOf(first.promptId)).toEqual(['session_update', 'turn_complete']);
    expect(sink.typesOf(second.promptId)).toEqual([
      'pending_prompt_added',
      'pending_prompt_started',
      'session_update',
      'turn_complete',
      'pending_prompt_completed',
    ]);
    const started = sink.ofType('pending_prompt_started').find((event) => event.promptId === second.promptId);
    expect(started?.data).toEqual({ sessionId: sid, promptId: second.promptId, text: 'two' });
    const echo = sink.events.find(
      (event) => event.promptId === second.promptId && event.type === 'session_update',
    );
    expect(echo?.data).toEqual({
      sessionId: sid,
      update: { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'two' } },
    });
    const completed = sink
      .ofType('pending_prompt_completed')
      .find((event) => event.promptId === second.promptId);
    expect(completed?.data).toEqual({ sessionId: sid, promptId: second.promptId, state: 'completed' });
    await expect(third.done).resolves.toEqual({ promptId: third.promptId, stopReason: 'end_turn' });
  });

  test('the next turn starts only after the previous terminal event', async () => {
    const clock = new FakeClock(0);
    const { bridge, sink } = setup({ clock, agent: new EchoAgent(clock, 100) });
    const sid = openSession(bridge);
    const first = bridge.sendPrompt(sid, text('a'));
    const second = bridge.sendPrompt(sid, text('b'));
    await flush();
    clock.advance(100);
    await flush();
    clock.advance(100);
    await flush();
    const order = sink.events.map((event) => `${event.type}:${event.promptId === first.promptId ? 1 : 2}`);
    expect(order.indexOf('turn_complete:1')).toBeLessThan(order.indexOf('pending_prompt_started:2'));
    expect(sink.terminalsOf(second.promptId)).toHaveLength(1);
  });

  test('agent updates are published as session_update with the prompt id and originator', async () => {
    const { bridge, agent, sink } = setup();
    const sid = openSession(bridge, 'web');
    const admission = bridge.sendPrompt(sid, text('hello'), { clientId: 'web' });
    await flush();
    agent.current(sid).chunk('hi there');
    const update = sink.events.at(-1);
    expect(update).toMatchObject({
      sessionId: sid,
      type: 'session_update',
      promptId: admission.promptId,
      originatorClientId: 'web',
      data: {
        sessionId: sid,
        update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hi there' } },
      },
    });
    expect(() => agent.current(sid).turn.emit(null as never)).toThrow(TypeError);
  });
});

describe('BP-7 failures do not poison the FIFO', () => {
  test('BP-7 a failing prompt ends with turn_error, its caller gets its own rejection, and the next prompt runs', async () => {
    const { bridge, agent, sink } = setup();
    const sid = openSession(bridge);
    const failing = bridge.sendPrompt(sid, text('fails'));
    const next = bridge.sendPrompt(sid, text('runs'));
    await flush();
    const failure = Object.assign(new Error('model queue timed out'), {
      code: 'model_queue_timeout',
      errorKind: 'model_runtime',
    });
    agent.current(sid).fail(failure);
    await expect(failing.done).rejects.toBe(failure);
    await flush();
    expect(sink.terminalsOf(failing.promptId).map((event) => event.data)).toEqual([
      {
        sessionId: sid,
        promptId: failing.promptId,
        message: 'model queue timed out',
        code: 'model_queue_timeout',
        errorKind: 'model_runtime',
      },
    ]);
    expect(agent.current(sid).promptId).toBe(next.promptId);
    agent.current(sid).succeed();
    await expect(next.done).resolves.toMatchObject({ stopReason: 'end_turn' });
  });

  test('BP-7 an agent that always fails never blocks the queue', async () => {
    const failure = Object.assign(new Error('spent'), { code: 'budget_exhausted' });
    const { bridge, sink } = setup({ agent: new FailingAgent(failure) });
    const sid = openSession(bridge);
    const admissions = [1, 2, 3, 4, 5].map((index) => bridge.sendPrompt(sid, text(`p${index}`)));
    await flush();
    for (const admission of admissions) {
      await expect(admission.done).rejects.toBe(failure);
      expect(sink.terminalsOf(admission.promptId)).toMatchObject([
        { type: 'turn_error', data: { code: 'budget_exhausted' } },
      ]);
    }
    expect(bridge.pendingPromptCount(sid)).toBe(0);
  });

  test('BP-7 a synchronous throw, a non-Error rejection or a malformed result each end in one turn_error', async () => {
    const behaviours: Array<() => Promise<TurnResult>> = [
      () => {
        throw new Error('sync throw');
      },
      () => Promise.reject('a string'),
      () => Promise.resolve({ nope: true } as unknown as TurnResult),
      () => Promise.reject(Object.assign(new Error('weird code'), { code: 'has spaces in it' })),
    ];
    let call = 0;
    const agent: Agent = {
      runTurn: () => (behaviours[call++] ?? (() => Promise.resolve({ stopReason: 'end_turn' })))(),
    };
    const { bridge, sink } = setup({ agent });
    const sid = openSession(bridge);
    const admissions = behaviours.map((_, index) => bridge.sendPrompt(sid, text(`p${index}`)));
    const last = bridge.sendPrompt(sid, text('fine'));
    await flush();
    const errors = admissions.map((admission) => sink.terminalsOf(admission.promptId));
    expect(errors.map((terminal) => terminal.length)).toEqual([1, 1, 1, 1]);
    expect(errors.map((terminal) => terminal[0]?.data['message'])).toEqual([
      'sync throw',
      'a string',
      `Agent returned an invalid turn result for prompt "${admissions[2]?.promptId}"`,
      'weird code',
    ]);
    expect(errors[2]?.[0]?.data['code']).toBe('invalid_turn_result');
    expect(errors[3]?.[0]?.data).not.toHaveProperty('code');
    await expect(last.done).resolves.toMatchObject({ stopReason: 'end_turn' });
    for (const admission of admissions) await admission.done.catch(() => undefined);
  });
});

describe('conversation history', () => {
  test('a turn records the user prompt and the agent messages; the next turn receives them', async () => {
    const { bridge, agent } = setup();
    const sid = openSession(bridge);
    bridge.sendPrompt(sid, text('first question'));
    await flush();
    expect(agent.current(sid).turn.conversation).toEqual([]);
    agent.current(sid).succeed('first answer');
    await flush();
    bridge.sendPrompt(sid, text('second question'));
    await flush();
    expect(agent.current(sid).turn.conversation).toEqual([
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer' },
    ]);
  });

  test('a failed turn leaves the history unchanged', async () => {
    const { bridge, agent } = setup();
    const sid = openSession(bridge);
    bridge.sendPrompt(sid, text('lost'));
    await flush();
    agent.current(sid).fail(new Error('x'));
    await flush();
    expect(bridge.conversation(sid)).toEqual([]);
  });

  test('the history is bounded: the oldest messages are trimmed first', async () => {
    const { bridge, agent } = setup({ maxConversationMessages: 3 });
    const sid = openSession(bridge);
    for (const question of ['q1', 'q2']) {
      bridge.sendPrompt(sid, text(question));
      await flush();
      agent.current(sid).succeed(`a-${question}`);
      await flush();
    }
    expect(bridge.conversation(sid)).toEqual([
      { role: 'assistant', content: 'a-q1' },
      { role: 'user', content: 'q2' },
      { role: 'assistant', content: 'a-q2' },
    ]);
  });

  test('the history is bounded in bytes too', async () => {
    const { bridge, agent } = setup({ maxConversationBytes: 10 });
    const sid = openSession(bridge);
    bridge.sendPrompt(sid, text('12345'));
    await flush();
    agent.current(sid).succeed('abcdefgh');
    await flush();
    expect(bridge.conversation(sid)).toEqual([{ role: 'assistant', content: 'abcdefgh' }]);
  });
});

describe('BP-3 branching', () => {
  test('BP-3 a branch copies the conversation into a new thread session and names it', async () => {
    const { bridge, agent, sink } = setup();
    const sid = openSession(bridge);
    bridge.sendPrompt(sid, text('plan the trip'));
    await flush();
    agent.current(sid).succeed('here is a plan');
    await flush();

    const branched = await bridge.branchSession(sid, { clientId: 'forker' });
    expect(branched).toEqual({
      sessionId: expect.any(String),
      workspaceCwd: '/work',
      attached: false,
      clientId: 'forker',
      createdAt: expect.any(Number),
      displayName: 'plan the trip (Branch)',
      forkedFrom: { sessionId: sid },
    });
    expect(bridge.conversation(branched.sessionId)).toEqual(bridge.conversation(sid));
    expect(bridge.status(branched.sessionId)).toMatchObject({
      forkedFrom: { sessionId: sid },
      clientCount: 1,
    });
    expect(sink.ofType('session_branched', sid)[0]).toMatchObject({
      data: { sourceSessionId: sid, newSessionId: branched.sessionId, displayName: 'plan the trip (Branch)' },
      originatorClientId: 'forker',
    });
    expect((await bridge.branchSession(sid, { name: '  experiment ' })).displayName).toBe('experiment');
    expect(() => bridge.branchSession(sid, { name: '   ' })).toThrow(
      expect.objectContaining({ code: 'invalid_branch_name' }),
    );
  });

  test('BP-3 branching while a prompt is running or queued is refused with branch_while_prompt_active', async () => {
    const { bridge, agent } = setup();
    const sid = openSession(bridge);
    bridge.sendPrompt(sid, text('running'));
    bridge.sendPrompt(sid, text('queued'));
    await flush();
    expect(() => bridge.branchSession(sid)).toThrow(BranchWhilePromptActiveError);
    agent.current(sid).succeed();
    await flush();
    // Only the queued prompt is pending now, and it is running: still refused.
    expect(() => bridge.branchSession(sid)).toThrow(
      expect.objectContaining({ code: 'branch_while_prompt_active' }),
    );
    agent.current(sid).succeed();
    await flush();
    await expect(bridge.branchSession(sid)).resolves.toMatchObject({ forkedFrom: { sessionId: sid } });
  });

  test('BP-3 a branch is serialized behind the FIFO and prompts sent after it wait for it', async () => {
    const store = new GatedStore();
    const { bridge, agent, sink } = setup({ store });
    const sid = openSession(bridge);
    bridge.sendPrompt(sid, text('before'));
    await flush();
    agent.current(sid).succeed('answer');
    await store.drain();

    let branchedId: string | undefined;
    const branch = bridge.branchSession(sid).then((result) => (branchedId = result.sessionId));
    const after = bridge.sendPrompt(sid, text('after'));
    expect(after.queued).toBe(true);
    expect(sink.typesOf(after.promptId)).toEqual(['pending_prompt_added']);
    await flush();
    expect(store.pending).toBe(1); // the branch holds the FIFO while its new session is saved
    expect(agent.running).toHaveLength(0);
    expect(branchedId).toBeUndefined();

    await store.drain();
    await branch;
    await flush();
    expect(agent.current(sid).promptId).toBe(after.promptId);
    expect(bridge.conversation(branchedId as string)).toEqual([
      { role: 'user', content: 'before' },
      { role: 'assistant', content: 'answer' },
    ]);
  });

  test('BP-3 a branch consumes no prompt slot', async () => {
    const store = new GatedStore();
    const { bridge } = setup({ store, maxPendingPromptsPerSession: 1 });
    const sid = openSession(bridge);
    const branch = bridge.branchSession(sid);
    expect(bridge.pendingPromptCount(sid)).toBe(0);
    bridge.sendPrompt(sid, text('fits beside the branch'));
    expect(bridge.pendingPromptCount(sid)).toBe(1);
    expect(() => bridge.sendPrompt(sid, text('over the limit'))).toThrow(PromptQueueFullError);
    expect(bridge.pendingPrompts(sid).map((prompt) => prompt.state)).toEqual(['queued']);
    await store.drain();
    await branch;
  });

  test('BP-3 a branch waits for an abandoned turn whose deadline passed before it copies the history', async () => {
    const { bridge, agent, clock } = setup({ promptDeadlineMs: 1_000 });
    agent.onAbort = 'ignore';
    const sid = openSession(bridge);
    const slow = bridge.sendPrompt(sid, text('slow'));
    await flush();
    clock.advance(1_000);
    await expect(slow.done).rejects.toMatchObject({ code: 'prompt_deadline_exceeded' });
    expect(bridge.pendingPromptCount(sid)).toBe(0);

    let done = false;
    const branch = bridge.branchSession(sid).then((result) => {
      done = true;
      return result;
    });
    await flush();
    expect(done).toBe(false);
    agent.current(sid).succeed('too late');
    const result = await branch;
    expect(bridge.conversation(result.sessionId)).toEqual([]);
  });

  test('BP-3 a queued branch is rejected when its session closes', async () => {
    const store = new GatedStore();
    const { bridge } = setup({ store });
    const sid = openSession(bridge);
    const first = bridge.branchSession(sid);
    const second = bridge.branchSession(sid);
    const closed = bridge.closeSession(sid);
    await expect(second).rejects.toBeInstanceOf(SessionClosedError);
    await store.drain();
    await expect(first).resolves.toMatchObject({ forkedFrom: { sessionId: sid } });
    await closed;
    expect(bridge.sessionCount).toBe(1);
  });
});
