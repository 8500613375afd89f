import { afterEach, describe, expect, test } from 'vitest';
import { DaemonClient, type DaemonEvent } from '@qwen-code/sdk/daemon';
import { negotiateTransport } from '@qwen-code/sdk/daemon/transports';
import { api } from '../helpers/http-client.js';
import { AskingAgent, startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';
import { openAcpStream, type AcpStream } from '../helpers/acp-client.js';

// Each place where the official @qwen-code/sdk 0.1.14 ACP-over-HTTP client used /acp differently
// from what Sluice accepted (PROTOCOL §8), one test each, on a real loopback server.
let server: InProcessDaemon | undefined;

afterEach(async () => {
  await server?.stop();
  server = undefined;
});

function rpc(id: number, method: string, params: unknown = {}) {
  return { jsonrpc: '2.0', id, method, params };
}

/** `initialize` as a client sends it; `clientInfo` names the client. */
async function initialize(url: string, params: Record<string, unknown>): Promise<Record<string, string>> {
  const res = await api(url, 'POST', '/acp', { body: rpc(0, 'initialize', params) });
  expect(res.status).toBe(200);
  return { 'acp-connection-id': res.headers['acp-connection-id'] as string };
}

/** An ACP connection of a client that reads its answers on the streams (not the official client). */
async function streamedConnection(
  url: string,
): Promise<{ headers: Record<string, string>; conn: AcpStream }> {
  const headers = await initialize(url, { protocolVersion: 1, clientCapabilities: {} });
  return { headers, conn: await openAcpStream(url, headers) };
}

async function answerOf(url: string, headers: Record<string, string>, conn: AcpStream, body: { id: number }) {
  expect((await api(url, 'POST', '/acp', { body, headers })).status).toBe(202);
  return (await conn.waitFor((f) => f.message.id === body.id)).message;
}

describe('the official client over /acp (PROTOCOL §8)', () => {
  test('§8 initialize without protocolVersion (the official client sends none) negotiates version 1', async () => {
    server = await startInProcess();
    const res = await api(server.url, 'POST', '/acp', {
      body: rpc(1, 'initialize', { clientInfo: { name: 'qwen-code-sdk', version: '1.0.0' } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers['acp-connection-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.result).toMatchObject({ protocolVersion: 1, agentCapabilities: { loadSession: true } });
    // a version of the wrong type is still refused by the schema
    const wrong = await api(server.url, 'POST', '/acp', {
      body: rpc(2, 'initialize', { protocolVersion: 'one' }),
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.code).toBe(-32602);
  });

  test('§8 a connection whose clientInfo is qwen-code-sdk is answered inline: 200 with the JSON-RPC response', async () => {
    server = await startInProcess();
    const headers = await initialize(server.url, { clientInfo: { name: 'qwen-code-sdk', version: '1.0.0' } });
    const res = await api(server.url, 'POST', '/acp', {
      body: rpc(1, 'session/new', { cwd: server.daemon.config.workspace }),
      headers,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 1, result: { sessionId: expect.any(String) } });
    const prompt = await api(server.url, 'POST', '/acp', {
      body: rpc(2, 'session/prompt', {
        sessionId: res.body.result.sessionId,
        prompt: [{ type: 'text', text: 'hi' }],
      }),
      headers,
    });
    expect(prompt.body).toEqual({ jsonrpc: '2.0', id: 2, result: { stopReason: 'end_turn' } });
    // another client keeps the stream answers (202, as PROTOCOL §8 describes)
    const other = await initialize(server.url, { protocolVersion: 1, clientCapabilities: {} });
    const streamed = await api(server.url, 'POST', '/acp', { body: rpc(1, 'session/list'), headers: other });
    expect(streamed.status).toBe(202);
  });

  test('§8 session/new without mcpServers creates the session _meta["qwen-code/sessionId"] names', async () => {
    server = await startInProcess();
    const { headers, conn } = await streamedConnection(server.url);
    const sessionId = '6f1c2a8e-4b1d-4c3e-9a7f-0d2e5b8c1a3f';
    const answer = await answerOf(server.url, headers, conn, {
      ...rpc(1, 'session/new', {
        cwd: server.daemon.config.workspace,
        _meta: { 'qwen-code/sessionId': sessionId },
      }),
    });
    expect(answer.result).toEqual({ sessionId });
    expect((await api(server.url, 'GET', `/session/${sessionId}/status`)).status).toBe(200);
    const relative = await answerOf(
      server.url,
      headers,
      conn,
      rpc(2, 'session/new', { cwd: 'not/absolute' }),
    );
    expect(relative.error).toMatchObject({ code: -32602, data: { errorKind: 'invalid_cwd' } });
    conn.close();
  });

  test('§8 session/list reads workspaceCwd and _meta.size and carries the REST summary fields', async () => {
    server = await startInProcess();
    const { headers, conn } = await streamedConnection(server.url);
    const workspaceCwd = server.daemon.config.workspace!;
    for (let id = 1; id <= 3; id++)
      await answerOf(server.url, headers, conn, rpc(id, 'session/new', { cwd: workspaceCwd }));
    const page = await answerOf(
      server.url,
      headers,
      conn,
      rpc(4, 'session/list', { workspaceCwd, _meta: { size: 2 } }),
    );
    expect(page.result.sessions).toHaveLength(2);
    // The cursor is REST's listing cursor (stored sessions included, issue 19 item 16).
    expect(page.result.nextCursor).toEqual(expect.any(String));
    const rest = await answerOf(
      server.url,
      headers,
      conn,
      rpc(6, 'session/list', { workspaceCwd, cursor: page.result.nextCursor }),
    );
    expect(rest.result.sessions).toHaveLength(1);
    expect(rest.result.nextCursor).toBeUndefined();
    expect(page.result.sessions[0]).toMatchObject({
      sessionId: expect.any(String),
      cwd: workspaceCwd,
      workspaceCwd,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      clientCount: 1,
      hasActivePrompt: false,
    });
    const elsewhere = await answerOf(
      server.url,
      headers,
      conn,
      rpc(5, 'session/list', { workspaceCwd: '/nowhere' }),
    );
    expect(elsewhere.result.sessions).toEqual([]);
    conn.close();
  });

  test('§8 a request naming a session posted without Acp-Session-Id is answered on the connection stream', async () => {
    server = await startInProcess();
    const { headers, conn } = await streamedConnection(server.url);
    const { sessionId } = (
      await answerOf(
        server.url,
        headers,
        conn,
        rpc(1, 'session/new', { cwd: server.daemon.config.workspace }),
      )
    ).result;
    const sessionStream = await openAcpStream(server.url, { ...headers, 'acp-session-id': sessionId });
    // the official client waits for _qwen/session/heartbeat's answer on the connection stream
    const beat = await answerOf(server.url, headers, conn, rpc(2, '_qwen/session/heartbeat', { sessionId }));
    expect(beat.result).toMatchObject({ sessionId, lastSeenAt: expect.any(Number) });
    expect(sessionStream.frames.some((f) => f.message.id === 2)).toBe(false);
    // a turn is answered on the session stream
    await api(server.url, 'POST', '/acp', {
      body: rpc(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] }),
      headers,
    });
    expect((await sessionStream.waitFor((f) => f.message.id === 3)).message.result).toEqual({
      stopReason: 'end_turn',
    });
    sessionStream.close();
    conn.close();
  });

  test('§8 session/permission: no requestId → -32602; unknown request → -32002 with httpStatus 404', async () => {
    server = await startInProcess();
    const { headers, conn } = await streamedConnection(server.url);
    const missing = await answerOf(
      server.url,
      headers,
      conn,
      rpc(1, 'session/permission', { outcome: { outcome: 'cancelled' } }),
    );
    expect(missing.error.code).toBe(-32602);
    const unknown = await answerOf(
      server.url,
      headers,
      conn,
      rpc(2, 'session/permission', { requestId: 'nope', outcome: { outcome: 'cancelled' } }),
    );
    expect(unknown.error).toMatchObject({
      code: -32002,
      data: { errorKind: 'permission_request_not_found', httpStatus: 404 },
    });
    conn.close();
  });

  test('§7 the official client sees permission_request over acp-http and its respondToPermission vote lets the turn go on', async () => {
    const agent = new AskingAgent();
    server = await startInProcess({ permissionResponseTimeoutMs: 0 }, { agent });
    const transport = await negotiateTransport(server.url);
    expect(transport.type).toBe('acp-http');
    const client = new DaemonClient({ baseUrl: server.url, transport });
    try {
      const { workspaceCwd } = await client.capabilities();
      const { sessionId } = await client.createOrAttachSession({
        workspaceCwd: workspaceCwd!,
        sessionScope: 'thread',
      });
      const abort = new AbortController();
      const events = client.subscribeEvents(sessionId, { signal: abort.signal })[Symbol.asyncIterator]();
      const first = events.next();
      const turn = client.prompt(sessionId, { prompt: [{ type: 'text', text: 'may I?' }] });
      let asked: DaemonEvent | undefined;
      for (let step = await first; !step.done; step = await events.next())
        if (step.value.type === 'permission_request') {
          asked = step.value;
          break;
        }
      const { requestId, options } = asked!.data as {
        requestId: string;
        options: Array<{ optionId: string }>;
      };
      expect(options.map((o) => o.optionId)).toEqual(['allow', 'deny']);
      // an option the request did not offer is refused; the request stays open
      await expect(
        client.respondToPermission(requestId, { outcome: { outcome: 'selected', optionId: 'sudo' } }),
      ).rejects.toMatchObject({ status: 400, body: { data: { errorKind: 'invalid_option_id' } } });
      await expect(
        client.respondToPermission(requestId, { outcome: { outcome: 'selected', optionId: 'allow' } }),
      ).resolves.toBe(true);
      await expect(turn).resolves.toEqual({ stopReason: 'end_turn' });
      expect(agent.outcomes).toEqual([{ outcome: 'selected', optionId: 'allow' }]);
      // first responder won: a second vote finds no open request
      await expect(
        client.respondToPermission(requestId, { outcome: { outcome: 'selected', optionId: 'deny' } }),
      ).resolves.toBe(false);
      abort.abort();
    } finally {
      transport.dispose();
    }
  });
});
