import { describe, expect, test } from 'vitest';
import {
  EchoProvider,
  MemoryJournal,
  ModelRuntime,
  type ModelProvider,
  type TaskBudgetLimits,
} from '@sluice/runtime';
import { ChatAgent } from '../../src/agents/index.js';
import { SessionBridge, type SessionEvent, type SessionUpdate } from '../../src/sessions/index.js';

function setup(
  provider: ModelProvider = new EchoProvider({ chunkSize: 4 }),
  scheduler = {},
  budgetLimits?: TaskBudgetLimits,
) {
  const journal = new MemoryJournal();
  const runtime = new ModelRuntime({ provider, journal, scheduler });
  const agent = new ChatAgent({ runtime, ...(budgetLimits === undefined ? {} : { budgetLimits }) });
  const events: Array<SessionEvent & { sessionId: string }> = [];
  const bridge = new SessionBridge({
    agent,
    events: { publish: (sessionId, event) => events.push({ sessionId, ...event }) },
    workspaces: ['/ws'],
  });
  return { journal, runtime, agent, bridge, events };
}

function turn(
  sessionId: string,
  prompt: string,
  conversation: { role: 'user' | 'assistant'; content: string }[] = [],
) {
  const updates: SessionUpdate[] = [];
  return {
    updates,
    turn: {
      sessionId,
      cwd: '/workspace',
      workspaceCwd: '/workspace',
      promptId: `p-${prompt}`,
      prompt: [{ type: 'text', text: prompt }],
      conversation,
      signal: new AbortController().signal,
      emit: (update: SessionUpdate) => updates.push(update),
    },
  };
}

describe('ChatAgent', () => {
  test('streams the model answer as agent_message_chunk updates and returns the stop reason', async () => {
    const { agent } = setup();
    const { turn: t, updates } = turn('s1', 'hello there world');
    const result = await agent.runTurn(t);
    expect(result.stopReason).toBe('end_turn');
    expect(updates.length).toBeGreaterThan(1);
    for (const update of updates)
      expect(update).toMatchObject({ sessionUpdate: 'agent_message_chunk', content: { type: 'text' } });
    const text = updates.map((u) => (u['content'] as { text: string }).text).join('');
    expect(text).toBe('Echo: hello there world');
    expect(result.messages).toEqual([{ role: 'assistant', content: 'Echo: hello there world' }]);
  });

  test("the model's token usage is reported after the text, as an empty agent_message_chunk with _meta.usage", async () => {
    const provider: ModelProvider = {
      name: 'fixed',
      defaultModel: 'fixed-1',
      complete: async () => ({
        text: 'ab',
        stopReason: 'end_turn',
        usage: { inputTokens: 12, outputTokens: 3 },
      }),
      async *stream() {
        yield { type: 'delta', text: 'a' };
        yield { type: 'delta', text: 'b' };
        yield { type: 'finished', stopReason: 'end_turn', usage: { inputTokens: 12, outputTokens: 3 } };
      },
    };
    const { agent } = setup(provider);
    const { turn: t, updates } = turn('s1', 'count me');
    const result = await agent.runTurn(t);
    expect(updates).toEqual([
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'a' } },
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'b' } },
      {
        sessionUpdate: 'agent_message_chunk',
        content: { type: 'text', text: '' },
        _meta: { usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15 } },
      },
    ]);
    // the usage chunk adds nothing to the recorded answer
    expect(result).toEqual({ stopReason: 'end_turn', messages: [{ role: 'assistant', content: 'ab' }] });
  });

  test('SCH-2 one task budget per session is reused across its turns', async () => {
    const { agent, journal } = setup();
    await agent.runTurn(turn('s1', 'one').turn);
    await agent.runTurn(
      turn('s1', 'two', [
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'Echo: one' },
      ]).turn,
    );
    await agent.runTurn(turn('s2', 'other').turn);
    expect(agent.budgetFor('s1').usage().calls).toBe(2);
    expect(agent.budgetFor('s2').usage().calls).toBe(1);
    const requests = journal.records().filter((r) => r.type === 'model_request');
    expect(requests.map((r) => r.taskId)).toEqual(['s1', 's1', 's2']);
    const second = requests[1];
    expect(second?.type === 'model_request' && second.request.messages.map((m) => m.content)).toEqual([
      'one',
      'Echo: one',
      'two',
    ]);
    agent.forgetSession('s1');
    expect(agent.budgetCount).toBe(1);
  });

  test('a turn sends the newest history that fits contextMaxBytes; the session keeps the rest', async () => {
    const journal = new MemoryJournal();
    const runtime = new ModelRuntime({ provider: new EchoProvider(), journal });
    const agent = new ChatAgent({ runtime, contextMaxBytes: 20 });
    const history = [
      { role: 'user' as const, content: 'first question' }, // 14 bytes: does not fit any more
      { role: 'assistant' as const, content: 'answer one' }, // 10
      { role: 'user' as const, content: 'again' }, // 5
      { role: 'assistant' as const, content: 'ok' }, // 2
    ];
    await agent.runTurn(turn('s1', 'now', history).turn);
    const sent = journal.records().find((r) => r.type === 'model_request');
    expect(sent?.type === 'model_request' && sent.request.messages.map((m) => m.content)).toEqual([
      'answer one',
      'again',
      'ok',
      'now',
    ]);
    expect(() => new ChatAgent({ runtime, contextMaxBytes: -1 })).toThrow(
      /contextMaxBytes must be a non-negative integer, got -1/,
    );
  });

  test('a runtime admission error propagates with its code (turn_error code through the bridge)', async () => {
    const { bridge, events } = setup(new EchoProvider(), { maxRequestBytes: 64 });
    const { sessionId } = bridge.createSession();
    const admission = bridge.sendPrompt(sessionId, [{ type: 'text', text: 'x'.repeat(200) }]);
    await expect(admission.done).rejects.toMatchObject({ code: 'request_too_large' });
    const terminal = events.find((e) => e.type === 'turn_error');
    expect(terminal?.data).toMatchObject({ code: 'request_too_large', promptId: admission.promptId });
  });

  test('a session whose task budget is spent ends its next turn with turn_error budget_exhausted; the FIFO goes on', async () => {
    const { bridge, events } = setup(new EchoProvider(), {}, { maxCalls: 1 });
    const { sessionId } = bridge.createSession();
    const first = bridge.sendPrompt(sessionId, [{ type: 'text', text: 'one' }]);
    const second = bridge.sendPrompt(sessionId, [{ type: 'text', text: 'two' }]);
    await expect(first.done).resolves.toMatchObject({ stopReason: 'end_turn' });
    await expect(second.done).rejects.toMatchObject({ code: 'budget_exhausted' });
    const terminals = events.filter((e) => e.type === 'turn_complete' || e.type === 'turn_error');
    expect(terminals.map((e) => [e.type, e.data['promptId'], e.data['code']])).toEqual([
      ['turn_complete', first.promptId, undefined],
      ['turn_error', second.promptId, 'budget_exhausted'],
    ]);
    // another session has its own budget
    const other = bridge.createSession({ cwd: '/ws', scope: 'thread' });
    await expect(
      bridge.sendPrompt(other.sessionId, [{ type: 'text', text: 'fresh' }]).done,
    ).resolves.toMatchObject({ stopReason: 'end_turn' });
  });

  test('through the bridge a turn emits user echo, agent chunks and turn_complete end_turn', async () => {
    const { bridge, events } = setup();
    const { sessionId } = bridge.createSession();
    const admission = bridge.sendPrompt(sessionId, [{ type: 'text', text: 'hi' }]);
    await expect(admission.done).resolves.toMatchObject({ stopReason: 'end_turn' });
    const kinds = events.map((e) =>
      e.type === 'session_update' ? (e.data['update'] as SessionUpdate).sessionUpdate : e.type,
    );
    expect(kinds[0]).toBe('user_message_chunk');
    expect(kinds).toContain('agent_message_chunk');
    expect(kinds.at(-1)).toBe('turn_complete');
    expect(bridge.conversation(sessionId)).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Echo: hi' },
    ]);
  });

  test('cancel aborts the model call and the turn ends cancelled', async () => {
    const { bridge, events } = setup(new EchoProvider({ latencyMs: 60_000 }));
    const { sessionId } = bridge.createSession();
    const admission = bridge.sendPrompt(sessionId, [{ type: 'text', text: 'slow' }]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(bridge.cancel(sessionId)).toBe(true);
    await expect(admission.done).resolves.toMatchObject({ stopReason: 'cancelled' });
    expect(events.filter((e) => e.type === 'turn_complete')).toHaveLength(1);
  });
});
