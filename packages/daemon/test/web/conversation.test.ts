import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { Conversation, type StreamEvent } from '../../web/conversation.js';

// Issue 31 items 2, 3 and 5: what the web page folds from a session's events. Text is applied
// once per event id whatever a reconnect replays; a resync starts over; pending prompts count
// down at their terminal event; a permission shows which option won.

const chunk = (id: number, kind: string, text: string, promptId = 'p1'): StreamEvent => ({
  id,
  type: 'session_update',
  promptId,
  data: { update: { sessionUpdate: kind, content: { type: 'text', text } } },
});

const agentText = (conversation: Conversation): string =>
  conversation.items.map((item) => (item.kind === 'agent' ? item.text : '')).join('');

describe('the web page’s conversation', () => {
  test('a stream replayed from any earlier id (a reconnect) neither duplicates nor loses text', () => {
    const words = Array.from({ length: 40 }, (_, i) => `w${i} `);
    const events = words.map((word, i) => chunk(i + 1, 'agent_message_chunk', word));
    fc.assert(
      fc.property(fc.array(fc.nat({ max: events.length }), { maxLength: 6 }), (cuts) => {
        const conversation = new Conversation();
        // Each cut drops the connection after `cut` events; the daemon replays from lastEventId
        // (here: from an earlier position too, as a ring replay may overlap what arrived).
        for (const cut of cuts) for (const event of events.slice(0, cut)) conversation.apply(event);
        for (const event of events.slice(Math.max(0, conversation.lastEventId - 3)))
          conversation.apply(event);
        expect(agentText(conversation)).toBe(words.join(''));
        expect(conversation.items).toHaveLength(1);
      }),
    );
  });

  test('state_resync_required: reset, and the ring replayed after it rebuilds the conversation', () => {
    const conversation = new Conversation();
    conversation.apply(chunk(7, 'agent_message_chunk', 'stale '));
    conversation.reset();
    conversation.apply(chunk(1, 'user_message_chunk', 'hi'));
    conversation.apply(chunk(2, 'agent_message_chunk', 'hello'));
    expect(conversation.items.map((item) => item.kind)).toEqual(['user', 'agent']);
    expect(agentText(conversation)).toBe('hello');
  });

  test('pending prompts: admitted and queued count until their turn_complete or turn_error', () => {
    const conversation = new Conversation();
    conversation.admitted('p1');
    conversation.apply({ id: 1, type: 'pending_prompt_added', data: { promptId: 'p2' } });
    expect(conversation.pending.size).toBe(2);
    conversation.apply({ id: 2, type: 'turn_complete', data: { promptId: 'p1', stopReason: 'end_turn' } });
    conversation.apply({ id: 3, type: 'turn_error', data: { promptId: 'p2', message: 'session closed' } });
    expect(conversation.pending.size).toBe(0);
    const ends = conversation.items.filter((item) => item.kind === 'end');
    expect(ends.map((item) => (item.kind === 'end' ? (item.error ?? item.stopReason) : ''))).toEqual([
      'end_turn',
      'session closed',
    ]);
  });

  test('a permission request shows its options, then the option that won', () => {
    const conversation = new Conversation();
    const options = [
      { optionId: 'allow', name: 'Allow once', kind: 'allow_once' },
      { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
    ];
    conversation.apply({
      id: 1,
      type: 'permission_request',
      data: { requestId: 'r1', toolCall: { title: 'Write notes.txt' }, options },
    });
    conversation.apply({
      id: 2,
      type: 'permission_resolved',
      data: { requestId: 'r1', outcome: { outcome: 'selected', optionId: 'reject' } },
    });
    const [item] = conversation.items;
    expect(item).toMatchObject({ kind: 'permission', title: 'Write notes.txt', outcome: 'Reject', rev: 1 });
  });

  test('a tool call and its updates are one item: status, input, output and diffs', () => {
    const conversation = new Conversation();
    const update = (id: number, fields: Record<string, unknown>): StreamEvent => ({
      id,
      type: 'session_update',
      data: { update: { toolCallId: 't1', ...fields } },
    });
    conversation.apply(
      update(1, {
        sessionUpdate: 'tool_call',
        title: 'Edit a.txt',
        status: 'pending',
        rawInput: { path: 'a.txt' },
      }),
    );
    conversation.apply(
      update(2, {
        sessionUpdate: 'tool_call_update',
        status: 'completed',
        content: [{ type: 'diff', path: 'a.txt', oldText: 'old', newText: 'new' }],
      }),
    );
    expect(conversation.items).toHaveLength(1);
    expect(conversation.items[0]).toMatchObject({
      kind: 'tool',
      title: 'Edit a.txt',
      status: 'completed',
      input: '{\n  "path": "a.txt"\n}',
      diffs: [{ path: 'a.txt', oldText: 'old', newText: 'new' }],
    });
  });
});
