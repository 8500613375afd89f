import type { RequestError } from '@agentclientprotocol/sdk';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { api } from '../helpers/http-client.js';
import { INITIALIZE, connectAcpHttp, openAcpStream } from '../helpers/acp-client.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

function rpc(id: number, method: string, params: unknown = {}) {
  return { jsonrpc: '2.0', id, method, params };
}

/** POSTs `initialize` and returns the new connection id. */
async function initialize(url: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await api(url, 'POST', '/acp', { body: rpc(0, 'initialize', INITIALIZE), headers });
  expect(res.status).toBe(200);
  return res.headers['acp-connection-id'] as string;
}

describe('ACP over HTTP against the started CLI (PROTOCOL §8)', () => {
  let sluice: SluiceProcess;
  let workspace: string;

  beforeAll(async () => {
    sluice = await startSluice();
    workspace = (await api(sluice.url, 'GET', '/capabilities')).body.workspaceCwd as string;
  });
  afterAll(async () => {
    await sluice?.stop();
  });

  test('§8 the ACP SDK client: initialize → session/new → session/prompt through SSE → end_turn', async () => {
    const { connection, log } = connectAcpHttp(sluice.url);
    try {
      const init = await connection.agent.request('initialize', INITIALIZE);
      expect(init).toMatchObject({ protocolVersion: 1, agentCapabilities: { loadSession: true } });
      const { sessionId } = await connection.agent.request('session/new', { cwd: workspace, mcpServers: [] });
      const answer = await connection.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: 'hello over acp' }],
      });
      expect(answer).toEqual({ stopReason: 'end_turn' });
      // The turn's updates arrived before its answer (the session stream is ordered).
      const kinds = log.updates.filter((u) => u.sessionId === sessionId).map((u) => u.update.sessionUpdate);
      expect(kinds[0]).toBe('user_message_chunk');
      expect(kinds).toContain('agent_message_chunk');
      expect(log.notifications.map((n) => n.kind)).toContain('turn_complete');
    } finally {
      connection.close();
    }
  });

  test('§8 initialize → 200 inline response with an Acp-Connection-Id UUID', async () => {
    const res = await api(sluice.url, 'POST', '/acp', { body: rpc(7, 'initialize', INITIALIZE) });
    expect(res.status).toBe(200);
    expect(res.headers['acp-connection-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 7, result: { protocolVersion: 1 } });
  });

  test('§8 a body that is not application/json → 415', async () => {
    const res = await api(sluice.url, 'POST', '/acp', {
      rawBody: JSON.stringify(rpc(1, 'initialize', INITIALIZE)),
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.status).toBe(415);
  });

  test('§8 a batch → 501 with a -32600 error', async () => {
    const res = await api(sluice.url, 'POST', '/acp', { body: [rpc(1, 'initialize', INITIALIZE)] });
    expect(res.status).toBe(501);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
  });

  test('§8 malformed JSON → 400 with -32700; a non-JSON-RPC object → 400 with -32600', async () => {
    const parse = await api(sluice.url, 'POST', '/acp', { rawBody: '{"jsonrpc":', headers: JSON_HEADERS });
    expect(parse.status).toBe(400);
    expect(parse.body).toMatchObject({ id: null, error: { code: -32700 } });
    const invalid = await api(sluice.url, 'POST', '/acp', { body: { id: 3, method: 'initialize' } });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toMatchObject({ id: 3, error: { code: -32600 } });
  });

  test('§8 a message without Acp-Connection-Id → 400; with an unknown one → 404', async () => {
    const missing = await api(sluice.url, 'POST', '/acp', { body: rpc(1, 'session/list') });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('acp_connection_id_required');
    const unknown = await api(sluice.url, 'POST', '/acp', {
      body: rpc(1, 'session/list'),
      headers: { 'acp-connection-id': '00000000-0000-4000-8000-000000000000' },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('acp_connection_not_found');
  });

  test('§8 GET /acp without Accept: text/event-stream → 406; without a connection → 400', async () => {
    const id = await initialize(sluice.url);
    const noAccept = await api(sluice.url, 'GET', '/acp', { headers: { 'acp-connection-id': id } });
    expect(noAccept.status).toBe(406);
    const noConnection = await api(sluice.url, 'GET', '/acp', { headers: { accept: 'text/event-stream' } });
    expect(noConnection.status).toBe(400);
  });

  test('§8 other messages → 202 empty; responses ride the connection stream', async () => {
    const id = await initialize(sluice.url);
    const stream = await openAcpStream(sluice.url, { 'acp-connection-id': id });
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers['content-type']).toContain('text/event-stream');
      const posted = await api(sluice.url, 'POST', '/acp', {
        body: rpc(1, 'session/new', { cwd: workspace, mcpServers: [] }),
        headers: { 'acp-connection-id': id },
      });
      expect(posted.status).toBe(202);
      expect(posted.text).toBe('');
      const answer = await stream.waitFor((f) => f.message.id === 1);
      expect(answer.id).toBeUndefined();
      expect(answer.message.result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      const unknown = await api(sluice.url, 'POST', '/acp', {
        body: rpc(2, 'session/teleport', {}),
        headers: { 'acp-connection-id': id },
      });
      expect(unknown.status).toBe(202);
      expect((await stream.waitFor((f) => f.message.id === 2)).message.error.code).toBe(-32601);
    } finally {
      stream.close();
    }
  });

  test('§8 §6 a session stream carries bus events with id: and replays from Last-Event-ID', async () => {
    const id = await initialize(sluice.url);
    const headers = { 'acp-connection-id': id };
    const connStream = await openAcpStream(sluice.url, headers);
    try {
      await api(sluice.url, 'POST', '/acp', {
        body: rpc(1, 'session/new', { cwd: workspace, mcpServers: [] }),
        headers,
      });
      const sessionId = (await connStream.waitFor((f) => f.message.id === 1)).message.result
        .sessionId as string;
      await api(sluice.url, 'POST', '/acp', {
        body: rpc(2, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'replay me' }] }),
        headers: { ...headers, 'acp-session-id': sessionId },
      });
      const replay = await openAcpStream(sluice.url, {
        ...headers,
        'acp-session-id': sessionId,
        'last-event-id': '0',
      });
      try {
        // No session stream was open when the turn ended: its answer waited for this one (as the
        // reference daemon does; the official client reads session/prompt answers only there).
        expect((await replay.waitFor((f) => f.message.id === 2)).message.result).toEqual({
          stopReason: 'end_turn',
        });
        expect(connStream.frames.some((f) => f.message.id === 2)).toBe(false);
        expect(replay.headers['x-qwen-event-epoch']).toMatch(/^[0-9a-f-]{36}$/);
        await replay.waitFor((f) => f.message.params?.kind === 'replay_complete');
        const events = replay.frames.filter((f) => f.id !== undefined);
        expect(events.map((f) => f.id)).toEqual(events.map((_f, i) => i + 1));
        expect(events[0]?.message).toMatchObject({
          method: 'session/update',
          params: { sessionId, update: { sessionUpdate: 'user_message_chunk' } },
        });
        expect(events.map((f) => f.message.params.kind)).toContain('turn_complete');
        expect(replay.frames.find((f) => f.message.params?.kind === 'replay_complete')?.id).toBeUndefined();
      } finally {
        replay.close();
      }
    } finally {
      connStream.close();
    }
  });

  test('§8 DELETE /acp → 202 closes the connection: its stream ends and it is unknown after', async () => {
    const id = await initialize(sluice.url);
    const stream = await openAcpStream(sluice.url, { 'acp-connection-id': id });
    const deleted = await api(sluice.url, 'DELETE', '/acp', { headers: { 'acp-connection-id': id } });
    expect(deleted.status).toBe(202);
    await stream.ended;
    const after = await api(sluice.url, 'POST', '/acp', {
      body: rpc(1, 'session/list'),
      headers: { 'acp-connection-id': id },
    });
    expect(after.status).toBe(404);
    const again = await api(sluice.url, 'DELETE', '/acp', { headers: { 'acp-connection-id': id } });
    expect(again.status).toBe(404);
  });

  test('§8 session/list, session/fork, session/close and rejected settings over the SDK client', async () => {
    const { connection } = connectAcpHttp(sluice.url);
    try {
      await connection.agent.request('initialize', INITIALIZE);
      const { sessionId } = await connection.agent.request('session/new', { cwd: workspace, mcpServers: [] });
      const listed = await connection.agent.request('session/list', { cwd: workspace });
      expect(listed.sessions.map((s) => s.sessionId)).toContain(sessionId);
      const fork = await connection.agent.request<{ sessionId: string }>('session/fork', {
        sessionId,
        cwd: workspace,
      });
      expect(fork.sessionId).not.toBe(sessionId);
      const mode = await connection.agent
        .request('session/set_mode', { sessionId, modeId: 'yolo' })
        .catch((error: RequestError) => error);
      expect(mode).toMatchObject({ code: -32602, data: { errorKind: 'unsupported_session_setting' } });
      const missing = await connection.agent
        .request('session/prompt', {
          sessionId: '00000000-0000-4000-8000-000000000000',
          prompt: [{ type: 'text', text: 'x' }],
        })
        .catch((error: RequestError) => error);
      expect(missing).toMatchObject({ code: -32002, data: { errorKind: 'session_not_found' } });
      await connection.agent.request('session/close', { sessionId: fork.sessionId });
      const status = await api(sluice.url, 'GET', `/session/${fork.sessionId}/status`);
      expect(status.status).toBe(404);
    } finally {
      connection.close();
    }
  });
});

describe('BP-10 over ACP HTTP', () => {
  let sluice: SluiceProcess;

  beforeAll(async () => {
    sluice = await startSluice([
      '--echo-delay-ms',
      '2000',
      '--max-pending-prompts-per-session',
      '1',
      '--drain-timeout-ms',
      '0',
    ]);
  });
  afterAll(async () => {
    await sluice?.stop();
  });

  test('BP-10 a full session queue answers session/prompt with -32603 and data.errorKind prompt_queue_full', async () => {
    const { connection } = connectAcpHttp(sluice.url);
    try {
      await connection.agent.request('initialize', INITIALIZE);
      const workspace = (await api(sluice.url, 'GET', '/capabilities')).body.workspaceCwd as string;
      const { sessionId } = await connection.agent.request('session/new', { cwd: workspace, mcpServers: [] });
      const first = connection.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: 'slow' }],
      });
      await expect
        .poll(
          async () => (await api(sluice.url, 'GET', `/session/${sessionId}/status`)).body.pendingPromptCount,
        )
        .toBe(1);
      const refused = await connection.agent
        .request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'one too many' }] })
        .catch((error: RequestError) => error);
      expect(refused).toMatchObject({
        code: -32603,
        message: `Prompt queue full for session "${sessionId}" (1/1 pending)`,
        data: { errorKind: 'prompt_queue_full', sessionId, limit: 1, pendingCount: 1, httpStatus: 503 },
      });
      await connection.agent.notify('session/cancel', { sessionId });
      await expect(first).resolves.toEqual({ stopReason: 'cancelled' });
    } finally {
      connection.close();
    }
  });
});

describe('§2 security gates cover /acp', () => {
  let sluice: SluiceProcess;

  beforeAll(async () => {
    sluice = await startSluice(['--token', 'acp-secret']);
  });
  afterAll(async () => {
    await sluice?.stop();
  });

  test('§2 /acp without the bearer token → 401, with it → 200; a foreign Host → 403', async () => {
    const body = rpc(0, 'initialize', INITIALIZE);
    expect((await api(sluice.url, 'POST', '/acp', { body })).status).toBe(401);
    expect((await api(sluice.url, 'GET', '/acp', { headers: { accept: 'text/event-stream' } })).status).toBe(
      401,
    );
    const ok = await api(sluice.url, 'POST', '/acp', {
      body,
      headers: { authorization: 'Bearer acp-secret' },
    });
    expect(ok.status).toBe(200);
    const rebinding = await api(sluice.url, 'POST', '/acp', {
      body,
      headers: { authorization: 'Bearer acp-secret', host: 'evil.example:80' },
    });
    expect(rebinding.status).toBe(403);
  });
});
