import * as acp from '@agentclientprotocol/sdk';
import type { RequestError } from '@agentclientprotocol/sdk';
import { createHttpStream } from '@agentclientprotocol/sdk/experimental/http-client';
import { afterEach, describe, expect, test } from 'vitest';
import { api, openEvents } from '../helpers/http-client.js';
import { AskingAgent, startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';
import { INITIALIZE, connectAcpHttp, openAcpStream } from '../helpers/acp-client.js';

let server: InProcessDaemon | undefined;

afterEach(async () => {
  await server?.stop();
  server = undefined;
});

function rpc(id: number, method: string, params: unknown = {}) {
  return { jsonrpc: '2.0', id, method, params };
}

describe('permissions over ACP HTTP (PROTOCOL §7, §8)', () => {
  test('§8 a permission request reaches the ACP client as session/request_permission; its answer is the vote', async () => {
    const agent = new AskingAgent();
    server = await startInProcess({ permissionResponseTimeoutMs: 0 }, { agent });
    const asked: string[] = [];
    const { connection, log } = connectAcpHttp(server.url, {
      onPermission: (request) => {
        asked.push(request.options.map((o) => o.optionId).join(','));
        return { outcome: { outcome: 'selected', optionId: 'allow' } };
      },
    });
    try {
      await connection.agent.request('initialize', INITIALIZE);
      const { sessionId } = await connection.agent.request('session/new', {
        cwd: server.daemon.config.workspace,
        mcpServers: [],
      });
      const answer = await connection.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: 'may I?' }],
      });
      expect(answer).toEqual({ stopReason: 'end_turn' });
      expect(asked).toEqual(['allow,deny']);
      expect(agent.outcomes).toEqual([{ outcome: 'selected', optionId: 'allow' }]);
      const resolved = log.notifications.find((n) => n.kind === 'permission_resolved');
      expect(resolved?.data).toMatchObject({ outcome: { outcome: 'selected', optionId: 'allow' } });
    } finally {
      connection.close();
    }
  });

  test('§7 first responder wins across transports: a REST vote resolves it, the ACP answer comes too late', async () => {
    const agent = new AskingAgent();
    server = await startInProcess({ permissionResponseTimeoutMs: 0 }, { agent });
    const base = server.url;
    let voteOverRest: Promise<{ status: number }> | undefined;
    const { connection } = connectAcpHttp(base, {
      onPermission: (request) => {
        const requestId = (request._meta as { qwen: { requestId: string } }).qwen.requestId;
        voteOverRest = api(base, 'POST', `/permission/${requestId}`, {
          body: { outcome: { outcome: 'selected', optionId: 'deny' } },
        });
        return { outcome: { outcome: 'selected', optionId: 'allow' } };
      },
    });
    try {
      await connection.agent.request('initialize', INITIALIZE);
      const { sessionId } = await connection.agent.request('session/new', {
        cwd: server.daemon.config.workspace,
        mcpServers: [],
      });
      const events = await openEvents(base, sessionId);
      await connection.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: 'race' }],
      });
      const rest = await voteOverRest!;
      // Exactly one vote won: the REST vote (200, "deny") or the ACP answer (then REST got 404).
      expect([200, 404]).toContain(rest.status);
      expect(agent.outcomes).toEqual([
        { outcome: 'selected', optionId: rest.status === 200 ? 'deny' : 'allow' },
      ]);
      await events.waitFor((f) => f.event === 'permission_resolved');
      expect(events.frames.filter((f) => f.event === 'permission_resolved')).toHaveLength(1);
      events.close();
    } finally {
      connection.close();
    }
  });
});

describe('withdrawn and failed permission answers over ACP (issue 19 item 17)', () => {
  /** An ACP client whose permission handler is `answer`, with the request's id and abort signal. */
  function connectWithHandler(
    base: string,
    answer: (requestId: string, signal: AbortSignal) => Promise<acp.RequestPermissionResponse>,
  ): acp.ClientConnection {
    return acp
      .client({ name: 'sluice-test' })
      .onRequest('session/request_permission', ({ params, signal }) =>
        answer((params._meta as { qwen: { requestId: string } }).qwen.requestId, signal),
      )
      .connect(createHttpStream(`${base}/acp`));
  }

  test('§7 a JSON-RPC error answer is not a vote: the request stays open and a REST vote decides it', async () => {
    const agent = new AskingAgent();
    server = await startInProcess({ permissionResponseTimeoutMs: 0 }, { agent });
    const base = server.url;
    let errored: (requestId: string) => void = () => {};
    const answeredWithError = new Promise<string>((resolve) => (errored = resolve));
    const connection = connectWithHandler(base, (requestId) => {
      errored(requestId);
      return Promise.reject(new Error('this client cannot show dialogs'));
    });
    try {
      await connection.agent.request('initialize', INITIALIZE);
      const { sessionId } = await connection.agent.request('session/new', {
        cwd: server.daemon.config.workspace,
        mcpServers: [],
      });
      const answer = connection.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: 'may I?' }],
      });
      const requestId = await answeredWithError;
      // The client writes its messages in order: once a later request is answered, the daemon
      // has read the error answer. The permission request is still open for another client.
      await new Promise((resolve) => setImmediate(resolve));
      await connection.agent.request('session/list', { cwd: server.daemon.config.workspace });
      expect(server.daemon.permissions.isOpen(requestId)).toBe(true);
      const vote = await api(base, 'POST', `/permission/${requestId}`, {
        body: { outcome: { outcome: 'selected', optionId: 'allow' } },
      });
      expect(vote.status).toBe(200);
      await expect(answer).resolves.toEqual({ stopReason: 'end_turn' });
      expect(agent.outcomes).toEqual([{ outcome: 'selected', optionId: 'allow' }]);
    } finally {
      connection.close();
    }
  });

  test('§7 a request resolved elsewhere is withdrawn from the ACP client with $/cancel_request', async () => {
    const agent = new AskingAgent();
    server = await startInProcess({ permissionResponseTimeoutMs: 0 }, { agent });
    const base = server.url;
    let asked: (requestId: string) => void = () => {};
    const askedId = new Promise<string>((resolve) => (asked = resolve));
    let withdrawn = false;
    const connection = connectWithHandler(
      base,
      (requestId, signal) =>
        new Promise((resolve) => {
          asked(requestId);
          // The dialog stays up until the daemon withdraws the question.
          signal.addEventListener('abort', () => {
            withdrawn = true;
            resolve({ outcome: { outcome: 'cancelled' } });
          });
        }),
    );
    try {
      await connection.agent.request('initialize', INITIALIZE);
      const { sessionId } = await connection.agent.request('session/new', {
        cwd: server.daemon.config.workspace,
        mcpServers: [],
      });
      const answer = connection.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: 'may I?' }],
      });
      const requestId = await askedId;
      const vote = await api(base, 'POST', `/session/${sessionId}/permission/${requestId}`, {
        body: { outcome: { outcome: 'selected', optionId: 'deny' } },
      });
      expect(vote.status).toBe(200);
      await expect(answer).resolves.toEqual({ stopReason: 'end_turn' });
      await expect.poll(() => withdrawn).toBe(true);
      // The withdrawn dialog's late `cancelled` answer changed nothing.
      expect(agent.outcomes).toEqual([{ outcome: 'selected', optionId: 'deny' }]);
    } finally {
      connection.close();
    }
  });
});

describe('ACP HTTP bounds', () => {
  test('§8 connections are capped: one more initialize → 503 with errorKind acp_connection_limit_exceeded', async () => {
    server = await startInProcess({}, {}, { acp: { maxConnections: 1 } });
    const first = await api(server.url, 'POST', '/acp', { body: rpc(0, 'initialize', INITIALIZE) });
    expect(first.status).toBe(200);
    const second = await api(server.url, 'POST', '/acp', { body: rpc(0, 'initialize', INITIALIZE) });
    expect(second.status).toBe(503);
    expect(second.headers['retry-after']).toBe('5');
    expect(second.body.error).toMatchObject({
      code: -32603,
      data: { errorKind: 'acp_connection_limit_exceeded', limit: 1 },
    });
    const deleted = await api(server.url, 'DELETE', '/acp', {
      headers: { 'acp-connection-id': first.headers['acp-connection-id'] as string },
    });
    expect(deleted.status).toBe(202);
    expect((await api(server.url, 'POST', '/acp', { body: rpc(0, 'initialize', INITIALIZE) })).status).toBe(
      200,
    );
  });

  test('§8 an abandoned connection (no stream, no request) is closed after the idle timeout', async () => {
    server = await startInProcess({}, {}, { acp: { maxConnections: 1, idleTimeoutMs: 50 } });
    const url = server.url;
    const first = await api(url, 'POST', '/acp', { body: rpc(0, 'initialize', INITIALIZE) });
    const id = first.headers['acp-connection-id'] as string;
    await expect
      .poll(async () => (await api(url, 'DELETE', '/acp', { headers: { 'acp-connection-id': id } })).status)
      .toBe(404);
    expect((await api(url, 'POST', '/acp', { body: rpc(0, 'initialize', INITIALIZE) })).status).toBe(200);
  });

  test('§8 answers nobody reads are bounded: past maxOutstanding a request → 429', async () => {
    server = await startInProcess({}, {}, { acp: { maxOutstanding: 2 } });
    const init = await api(server.url, 'POST', '/acp', { body: rpc(0, 'initialize', INITIALIZE) });
    const headers = { 'acp-connection-id': init.headers['acp-connection-id'] as string };
    // No stream is open, so every answer waits in the connection's queue.
    expect((await api(server.url, 'POST', '/acp', { body: rpc(1, 'session/list'), headers })).status).toBe(
      202,
    );
    expect((await api(server.url, 'POST', '/acp', { body: rpc(2, 'session/list'), headers })).status).toBe(
      202,
    );
    const refused = await api(server.url, 'POST', '/acp', { body: rpc(3, 'session/list'), headers });
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('acp_too_many_requests');
    // Reading the stream frees the room.
    const stream = await openAcpStream(server.url, headers);
    await stream.waitFor((f) => f.message.id === 2);
    expect((await api(server.url, 'POST', '/acp', { body: rpc(4, 'session/list'), headers })).status).toBe(
      202,
    );
    await stream.waitFor((f) => f.message.id === 4);
    stream.close();
  });

  test('§8 reusing the id of an unanswered request → 400 acp_duplicate_request_id', async () => {
    server = await startInProcess({ echoDelayMs: 60_000 });
    const init = await api(server.url, 'POST', '/acp', { body: rpc(0, 'initialize', INITIALIZE) });
    const headers = { 'acp-connection-id': init.headers['acp-connection-id'] as string };
    await api(server.url, 'POST', '/acp', {
      body: rpc(1, 'session/new', { cwd: server.daemon.config.workspace, mcpServers: [] }),
      headers,
    });
    const stream = await openAcpStream(server.url, headers);
    const sessionId = (await stream.waitFor((f) => f.message.id === 1)).message.result.sessionId as string;
    const prompt = rpc(2, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'long' }] });
    expect((await api(server.url, 'POST', '/acp', { body: prompt, headers })).status).toBe(202);
    const again = await api(server.url, 'POST', '/acp', { body: prompt, headers });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('acp_duplicate_request_id');
    stream.close();
  });

  test('§8 a second reader of the connection stream → 409 while the first is open', async () => {
    server = await startInProcess();
    const init = await api(server.url, 'POST', '/acp', { body: rpc(0, 'initialize', INITIALIZE) });
    const headers = { 'acp-connection-id': init.headers['acp-connection-id'] as string };
    const first = await openAcpStream(server.url, headers);
    const second = await api(server.url, 'GET', '/acp', {
      headers: { ...headers, accept: 'text/event-stream' },
    });
    expect(second.status).toBe(409);
    first.close();
  });

  test('§8 a Acp-Session-Id that contradicts params.sessionId → 400', async () => {
    server = await startInProcess();
    const init = await api(server.url, 'POST', '/acp', { body: rpc(0, 'initialize', INITIALIZE) });
    const res = await api(server.url, 'POST', '/acp', {
      body: rpc(1, 'session/prompt', { sessionId: 'a', prompt: [] }),
      headers: { 'acp-connection-id': init.headers['acp-connection-id'] as string, 'acp-session-id': 'b' },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('acp_session_mismatch');
  });

  test('§8 DELETE cancels the prompts the connection is waiting for', async () => {
    server = await startInProcess({ echoDelayMs: 60_000 });
    const { connection } = connectAcpHttp(server.url);
    await connection.agent.request('initialize', INITIALIZE);
    const { sessionId } = await connection.agent.request('session/new', {
      cwd: server.daemon.config.workspace,
      mcpServers: [],
    });
    const events = await openEvents(server.url, sessionId);
    const prompt = connection.agent
      .request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'long' }] })
      .catch((error: RequestError) => error);
    await events.waitFor((f) => f.event === 'session_update');
    connection.close();
    const done = await events.waitFor((f) => f.event === 'turn_complete');
    expect(done.data.data.stopReason).toBe('cancelled');
    await prompt;
    events.close();
  });
});

describe('ACP over HTTP: the connection stream survives a reconnect (PROTOCOL §8)', () => {
  test('§8 after the connection stream is dropped, a new GET /acp reader gets the answers', async () => {
    server = await startInProcess();
    const init = await api(server.url, 'POST', '/acp', { body: rpc(0, 'initialize', INITIALIZE) });
    const headers = { 'acp-connection-id': init.headers['acp-connection-id'] as string };
    const first = await openAcpStream(server.url, headers);
    expect((await api(server.url, 'POST', '/acp', { body: rpc(1, 'session/list'), headers })).status).toBe(
      202,
    );
    await first.waitFor((f) => f.message.id === 1);
    // The network blips (or an EventSource reconnects after `retry: 3000`).
    first.close();
    await first.ended;
    await new Promise((resolve) => setTimeout(resolve, 50));

    const second = await openAcpStream(server.url, headers);
    expect(second.status).toBe(200);
    expect((await api(server.url, 'POST', '/acp', { body: rpc(2, 'session/list'), headers })).status).toBe(
      202,
    );
    const answer = await second.waitFor((f) => f.message.id === 2, 3000);
    expect(answer.message.result).toEqual({ sessions: [] });
    second.close();
  });
});

describe('ACP over HTTP: session/load of a session the connection already has (PROTOCOL §8)', () => {
  test('§8 session/load replays the history although the session stream is already open', async () => {
    server = await startInProcess();
    const { connection, log } = connectAcpHttp(server.url);
    try {
      await connection.agent.request('initialize', INITIALIZE);
      const cwd = server.daemon.config.workspace;
      const { sessionId } = await connection.agent.request('session/new', { cwd, mcpServers: [] });
      await connection.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: 'remember me' }],
      });
      await expect.poll(() => log.notifications.some((n) => n.kind === 'turn_complete')).toBe(true);
      log.updates.length = 0;
      await connection.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
      await expect
        .poll(() => log.updates.map((u) => u.update.sessionUpdate)[0], { timeout: 2000 })
        .toBe('user_message_chunk');
    } finally {
      connection.close();
    }
  });
});
