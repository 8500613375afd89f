import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { api, openEvents, textPrompt, type EventStream } from '../helpers/http-client.js';
import { AskingAgent, startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

let server: InProcessDaemon;
let agent: AskingAgent;
let sessionId: string;
let events: EventStream;

/** Sends a prompt and resolves with the permission_request it causes. */
async function promptAndAsk(): Promise<{ requestId: string; promptId: string }> {
  const sent = await api(server.url, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt('go') });
  expect(sent.status).toBe(202);
  const frame = await events.waitFor(
    (f) => f.event === 'permission_request' && f.data.promptId === sent.body.promptId,
  );
  return { requestId: frame.data.data.requestId as string, promptId: sent.body.promptId as string };
}

function vote(path: string, body: unknown, headers: Record<string, string> = {}) {
  return api(server.url, 'POST', path, { body, headers });
}

describe('permissions over HTTP (PROTOCOL §7)', () => {
  beforeEach(async () => {
    agent = new AskingAgent();
    server = await startInProcess({ permissionResponseTimeoutMs: 0 }, { agent });
    const created = await api(server.url, 'POST', '/session', { body: {} });
    sessionId = created.body.sessionId as string;
    events = await openEvents(server.url, sessionId);
  });

  afterEach(async () => {
    events.close();
    await server.stop();
  });

  test('§7 permission_request carries requestId, sessionId, toolCall and options; status shows it', async () => {
    const { requestId } = await promptAndAsk();
    const frame = events.frames.find((f) => f.event === 'permission_request')!;
    expect(frame.id).toBeGreaterThan(0);
    expect(frame.data.data).toMatchObject({
      requestId,
      sessionId,
      toolCall: { kind: 'edit' },
      options: [{ optionId: 'allow' }, { optionId: 'deny' }],
    });
    const status = await api(server.url, 'GET', `/session/${sessionId}/status`);
    expect(status.body).toMatchObject({ isWaitingForPermission: true, pendingInteractionCount: 1 });
    const workspace = encodeURIComponent(server.daemon.config.workspace);
    const listed = await api(server.url, 'GET', `/workspace/${workspace}/sessions`);
    expect(listed.body.sessions[0]).toMatchObject({ sessionId, isWaitingForPermission: true });
  });

  test('§7 a session-scoped vote → 200 {} and the turn continues with the chosen option', async () => {
    const { requestId, promptId } = await promptAndAsk();
    const res = await vote(`/session/${sessionId}/permission/${requestId}`, {
      outcome: { outcome: 'selected', optionId: 'allow' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    const done = await events.waitFor((f) => f.event === 'turn_complete' && f.data.promptId === promptId);
    expect(done.data.data.stopReason).toBe('end_turn');
    expect(agent.outcomes).toEqual([{ outcome: 'selected', optionId: 'allow' }]);
    const resolved = events.frames.find((f) => f.event === 'permission_resolved');
    expect(resolved?.data.data).toMatchObject({
      requestId,
      outcome: { outcome: 'selected', optionId: 'allow' },
    });
  });

  test('§7 first responder wins: the second vote → 404 plus permission_already_resolved', async () => {
    const { requestId } = await promptAndAsk();
    const first = await vote(`/permission/${requestId}`, {
      outcome: { outcome: 'selected', optionId: 'deny' },
    });
    const second = await vote(`/session/${sessionId}/permission/${requestId}`, {
      outcome: { outcome: 'selected', optionId: 'allow' },
    });
    expect(first.status).toBe(200);
    expect(second.status).toBe(404);
    expect(second.body).toMatchObject({ code: 'permission_request_not_found', requestId });
    const late = await events.waitFor((f) => f.event === 'permission_already_resolved');
    expect(late.data.data).toEqual({
      requestId,
      sessionId,
      outcome: { outcome: 'selected', optionId: 'deny' },
    });
    expect(agent.outcomes).toEqual([{ outcome: 'selected', optionId: 'deny' }]);
  });

  test('§7 an option that was not offered → 400 invalid_option_id', async () => {
    const { requestId } = await promptAndAsk();
    const res = await vote(`/permission/${requestId}`, {
      outcome: { outcome: 'selected', optionId: 'sudo' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_option_id', requestId, optionId: 'sudo' });
  });

  test.each([
    ['no outcome', {}],
    ['an unknown outcome', { outcome: { outcome: 'yes' } }],
    ['a non-object body', ['cancelled']],
  ])('§7 a malformed vote (%s) → 400 with a stable code', async (_name, body) => {
    const { requestId } = await promptAndAsk();
    const res = await vote(`/permission/${requestId}`, body);
    expect(res.status).toBe(400);
    expect(['invalid_permission_outcome', 'invalid_body']).toContain(res.body.code);
  });

  test('§7 an unknown request id → 404; an unknown session → 404 session_not_found', async () => {
    const unknown = await vote('/permission/nope', { outcome: { outcome: 'cancelled' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('permission_request_not_found');
    const noSession = await vote('/session/00000000-0000-4000-8000-000000000000/permission/nope', {
      outcome: { outcome: 'cancelled' },
    });
    expect(noSession.status).toBe(404);
    expect(noSession.body.code).toBe('session_not_found');
  });

  test('§7 cancelling the prompt resolves its open request as cancelled; a later vote → 404', async () => {
    const { requestId, promptId } = await promptAndAsk();
    expect((await api(server.url, 'POST', `/session/${sessionId}/cancel`)).status).toBe(204);
    const resolved = await events.waitFor((f) => f.event === 'permission_resolved');
    expect(resolved.data.data).toMatchObject({
      requestId,
      outcome: { outcome: 'cancelled' },
      reason: 'turn_aborted',
    });
    await events.waitFor((f) => f.event === 'turn_complete' && f.data.promptId === promptId);
    const late = await vote(`/permission/${requestId}`, {
      outcome: { outcome: 'selected', optionId: 'allow' },
    });
    expect(late.status).toBe(404);
  });

  test('§3 /capabilities advertises the vote features', async () => {
    const caps = await api(server.url, 'GET', '/capabilities');
    expect(caps.body.features).toEqual(
      expect.arrayContaining(['session_permission_vote', 'permission_vote']),
    );
    expect(caps.body.policy).toEqual({ permission: 'first-responder' });
  });
});

describe('permission timeout over HTTP (PROTOCOL §7)', () => {
  test('§7 an unanswered request picks the reject option after --permission-response-timeout-ms', async () => {
    const asking = new AskingAgent();
    const local = await startInProcess({ permissionResponseTimeoutMs: 50 }, { agent: asking });
    try {
      const created = await api(local.url, 'POST', '/session', { body: {} });
      const stream = await openEvents(local.url, created.body.sessionId);
      await api(local.url, 'POST', `/session/${created.body.sessionId}/prompt`, { body: textPrompt('go') });
      const resolved = await stream.waitFor((f) => f.event === 'permission_resolved');
      expect(resolved.data.data).toMatchObject({
        outcome: { outcome: 'selected', optionId: 'deny' },
        reason: 'timeout',
      });
      await stream.waitFor((f) => f.event === 'turn_complete');
      expect(asking.outcomes).toEqual([{ outcome: 'selected', optionId: 'deny' }]);
      stream.close();
    } finally {
      await local.stop();
    }
  });
});
