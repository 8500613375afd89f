import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { api } from '../helpers/http-client.js';
import {
  openSession,
  promptAndWait,
  sendPrompt,
  startAgentDaemon,
  terminalOf,
  testAgent,
  textOf,
  until,
  type AgentDaemon,
} from './acp-helpers.js';

// External ACP agents as session backends (issue 18 §1): a session's turns run in a real agent
// process (the ACP test agent), and what it streams reaches the session's events unchanged.

describe('a session on an external ACP agent', () => {
  let d: AgentDaemon;
  beforeAll(async () => {
    d = await startAgentDaemon((log) => [testAgent('test', log)]);
  });
  afterAll(async () => {
    await d?.stop();
  });

  test("the agent's streamed text reaches the session and its history", async () => {
    const session = await openSession(d.url);
    const { done, text } = await promptAndWait(d.url, session, 'say hello from the agent');
    expect(done.event).toBe('turn_complete');
    expect(done.data.data.stopReason).toBe('end_turn');
    expect(text).toBe('hello from the agent ');
    expect(d.daemon.bridge.conversation(session.sessionId)).toEqual([
      { role: 'user', content: 'say hello from the agent' },
      { role: 'assistant', content: 'hello from the agent ' },
    ]);
    // the agent session was opened at create, in the session's cwd
    expect(d.log().find((entry) => entry.method === 'session/new')?.params).toMatchObject({
      cwd: d.workspace,
    });
    session.stream.close();
  });

  test('unknown session/update variants and unknown fields are relayed unchanged', async () => {
    const session = await openSession(d.url);
    const { promptId, done } = await promptAndWait(d.url, session, 'weird');
    expect(done.event).toBe('turn_complete');
    const updates = session.stream.frames
      .filter((f) => f.event === 'session_update' && f.data.promptId === promptId)
      .map((f) => f.data.data.update);
    expect(updates).toContainEqual({
      sessionUpdate: 'sluice_test_variant',
      payload: { nested: [1, 2] },
      extra: 'kept',
    });
    expect(updates).toContainEqual({
      sessionUpdate: 'agent_message_chunk',
      content: { type: 'text', text: 'weird', unknownInner: 42 },
      unknownTop: { deep: true },
      _meta: { vendor: 'x' },
    });
    session.stream.close();
  });

  test('an update the agent sends after its turn ended is published without a prompt id', async () => {
    const session = await openSession(d.url);
    const { done } = await promptAndWait(d.url, session, 'later afterwards');
    expect(done.event).toBe('turn_complete');
    const late = await session.stream.waitFor(
      (f) => f.event === 'session_update' && f.data.data.update.content?.text === 'afterwards',
    );
    expect(late.data.promptId).toBeUndefined();
    expect(late.data.data.sessionId).toBe(session.sessionId);
    session.stream.close();
  });

  test("the agent's permission request reaches the clients and the first vote lets it continue", async () => {
    const session = await openSession(d.url);
    const promptId = await sendPrompt(d.url, session.sessionId, 'ask');
    const asked = await session.stream.waitFor((f) => f.event === 'permission_request');
    expect(asked.data.data.toolCall).toMatchObject({ toolCallId: 'call-1', title: 'write a file' });
    const { requestId } = asked.data.data;
    const vote = { outcome: { outcome: 'selected', optionId: 'allow' } };
    expect((await api(d.url, 'POST', `/permission/${requestId}`, { body: vote })).status).toBe(200);
    expect((await api(d.url, 'POST', `/permission/${requestId}`, { body: vote })).status).toBe(404);
    const done = await terminalOf(session.stream, promptId);
    expect(done.event).toBe('turn_complete');
    expect(textOf(session.stream, promptId)).toBe('outcome:allow');
    session.stream.close();
  });

  test('cancel reaches the agent as session/cancel and the turn ends cancelled', async () => {
    const session = await openSession(d.url);
    const promptId = await sendPrompt(d.url, session.sessionId, 'wait');
    await until(
      () => d.log().some((e) => e.method === 'session/prompt' && JSON.stringify(e.params).includes('"wait"')),
      'the prompt reached the agent',
    );
    expect((await api(d.url, 'POST', `/session/${session.sessionId}/cancel`)).status).toBe(204);
    const done = await terminalOf(session.stream, promptId);
    expect(done.data.data.stopReason).toBe('cancelled');
    const agentSessionId = d
      .log()
      .find((e) => e.method === 'session/prompt' && JSON.stringify(e.params).includes('"wait"'))!.params[
      'sessionId'
    ];
    expect(d.log()).toContainEqual(
      expect.objectContaining({ method: 'session/cancel', params: { sessionId: agentSessionId } }),
    );
    // the session goes on in the same process
    expect((await promptAndWait(d.url, session, 'say again')).text).toBe('again ');
    session.stream.close();
  });

  test("the agent calls the daemon's gateway with its session's own credential", async () => {
    const session = await openSession(d.url);
    const { text } = await promptAndWait(d.url, session, 'env');
    const [baseUrl, token] = text.split(' ');
    expect(baseUrl).toBe(`${d.url}/v1`);
    expect(d.daemon.credentials.resolve(token!)?.sessionId).toBe(session.sessionId);
    // valid for the session's lifetime only
    await api(d.url, 'DELETE', `/session/${session.sessionId}`);
    await until(() => d.daemon.credentials.resolve(token!) === undefined, 'the credential was revoked');
    session.stream.close();
  });
});
