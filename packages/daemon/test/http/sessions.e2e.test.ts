import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { api, openEvents, textPrompt, type SseFrame } from '../helpers/http-client.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

let sluice: SluiceProcess;
let base: string;
let workspace: string;

beforeAll(async () => {
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-ws-')));
  sluice = await startSluice(['--workspace', workspace, '--sse-heartbeat-ms', '20']);
  base = sluice.url;
});

afterAll(async () => {
  await sluice?.stop();
  rmSync(workspace, { recursive: true, force: true });
});

async function threadSession(): Promise<{ sessionId: string; clientId: string }> {
  const res = await api(base, 'POST', '/session', { body: { sessionScope: 'thread' } });
  expect(res.status).toBe(200);
  return res.body;
}

/** What `Date.prototype.toISOString` produces: the wire's session timestamps (reference client types). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const updateKind = (frame: SseFrame): string =>
  frame.event === 'session_update' ? frame.data.data.update.sessionUpdate : frame.event;

describe('discovery', () => {
  test('GET /health is open and answers {status:ok}', async () => {
    const res = await api(base, 'GET', '/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  test('BP-9 GET /capabilities has the exact §3 shape with limits.model from the runtime', async () => {
    const res = await api(base, 'GET', '/capabilities');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      v: 1,
      protocolVersions: { current: 'v1', supported: ['v1'] },
      mode: 'http-bridge',
      workspaceCwd: workspace,
      transports: ['rest', 'acp-http'],
      policy: { permission: 'first-responder' },
      limits: {
        maxPendingPromptsPerSession: 5,
        maxSessionsPerWorkspace: 32,
        model: {
          maxConcurrency: 4,
          maxQueued: 32,
          maxInflight: 64,
          maxRequestBytes: 8 * 1024 * 1024,
          defaultTimeoutMs: 600_000,
        },
      },
    });
    expect(res.body.features).toEqual([
      'health',
      'capabilities',
      'session_create',
      'session_id_override',
      'session_scope_override',
      'session_prompt',
      'non_blocking_prompt',
      'session_events',
      'session_cancel',
      'session_status',
      'session_close',
      'session_branch',
      'session_permission_vote',
      'permission_vote',
      'client_identity',
      'client_heartbeat',
      'pending_prompts',
    ]);
  });

  test('GET /runtime/snapshot returns the scheduler snapshot', async () => {
    const res = await api(base, 'GET', '/runtime/snapshot');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      accepting: true,
      inflight: expect.any(Number),
      jobs: expect.any(Array),
    });
  });

  test('an unknown route is a JSON 404', async () => {
    const res = await api(base, 'GET', '/nope');
    expect(res.status).toBe(404);
    expect(res.body.error).toEqual(expect.any(String));
  });
});

describe('sessions', () => {
  test('§4 single scope coalesces onto one session per workspace with a new clientId each time', async () => {
    const first = await api(base, 'POST', '/session', { body: {} });
    const second = await api(base, 'POST', '/session', { body: { cwd: workspace, sessionScope: 'single' } });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ workspaceCwd: workspace, attached: expect.any(Boolean) });
    expect(second.body.sessionId).toBe(first.body.sessionId);
    expect(second.body.attached).toBe(true);
    expect(second.body.clientId).not.toBe(first.body.clientId);
    expect(second.body.createdAt).toMatch(ISO_TIME);
    expect(Object.keys(second.body).sort()).toEqual([
      'attached',
      'clientId',
      'createdAt',
      'sessionId',
      'workspaceCwd',
    ]);
  });

  test('§4 thread scope always creates a new session', async () => {
    const a = await threadSession();
    const b = await threadSession();
    expect(a.sessionId).not.toBe(b.sessionId);
  });

  test('a caller-chosen UUID creates a thread session with that id', async () => {
    const id = '3f1c2a4e-8b7d-4c6a-9e5f-1a2b3c4d5e6f';
    const res = await api(base, 'POST', '/session', { body: { sessionId: id } });
    expect(res.status).toBe(200);
    expect(res.body.sessionId).toBe(id);
  });

  test('invalid scope, relative cwd and a cwd outside the workspace are 400s with codes', async () => {
    const scope = await api(base, 'POST', '/session', { body: { sessionScope: 'forever' } });
    expect(scope.status).toBe(400);
    expect(scope.body.code).toBe('invalid_session_scope');
    const relative = await api(base, 'POST', '/session', { body: { cwd: 'relative/dir' } });
    expect(relative.status).toBe(400);
    const outside = await api(base, 'POST', '/session', { body: { cwd: '/definitely/elsewhere' } });
    expect(outside.status).toBe(400);
    expect(outside.body.code).toBe('workspace_mismatch');
  });

  test('unknown session on a session route → 404 with the exact envelope', async () => {
    const sid = 'no-such-session';
    for (const [method, path] of [
      ['GET', `/session/${sid}/status`],
      ['POST', `/session/${sid}/prompt`],
      ['GET', `/session/${sid}/events`],
      ['POST', `/session/${sid}/cancel`],
      ['DELETE', `/session/${sid}`],
      ['GET', `/session/${sid}/pending-prompts`],
      ['POST', `/session/${sid}/branch`],
      ['POST', `/session/${sid}/heartbeat`],
    ] as const) {
      const res = await api(
        base,
        method,
        path,
        method === 'POST' && path.endsWith('prompt') ? { body: textPrompt('x') } : {},
      );
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body).toEqual({
        error: `No session with id "${sid}"`,
        code: 'session_not_found',
        sessionId: sid,
      });
    }
  });

  test('§4 status, heartbeat and detach', async () => {
    const { sessionId, clientId } = await threadSession();
    const status = await api(base, 'GET', `/session/${sessionId}/status`);
    expect(status.body).toMatchObject({
      sessionId,
      workspaceCwd: workspace,
      clientCount: 1,
      hasActivePrompt: false,
      isWaitingForPermission: false,
      pendingInteractionCount: 0,
      pendingInteractions: [],
    });
    const beat = await api(base, 'POST', `/session/${sessionId}/heartbeat`, {
      body: {},
      headers: { 'x-qwen-client-id': clientId },
    });
    expect(beat.status).toBe(200);
    expect(beat.body).toMatchObject({ sessionId, clientId, lastSeenAt: expect.any(Number) });

    const detach = await api(base, 'POST', `/session/${sessionId}/detach`, {
      headers: { 'x-qwen-client-id': clientId },
    });
    expect(detach.status).toBe(204);
    const again = await api(base, 'POST', `/session/${sessionId}/heartbeat`, {
      headers: { 'x-qwen-client-id': clientId },
    });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ code: 'invalid_client_id', sessionId, clientId });
  });

  test('§4 GET /workspace/:cwd/sessions pages newest first through every session exactly once', async () => {
    const mine = [await threadSession(), await threadSession(), await threadSession()];
    const closed = await threadSession();
    expect((await api(base, 'DELETE', `/session/${closed.sessionId}`)).status).toBe(204);
    const listPath = `/workspace/${encodeURIComponent(workspace)}/sessions`;
    const listed: Array<{ sessionId: string; createdAt: string }> = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await api(
        base,
        'GET',
        `${listPath}?size=2${cursor === undefined ? '' : `&cursor=${cursor}`}`,
      );
      expect(page.status).toBe(200);
      expect(page.body.sessions.length).toBeLessThanOrEqual(2);
      listed.push(...page.body.sessions);
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor !== undefined);
    const ids = listed.map((summary) => summary.sessionId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(pages).toBe(Math.ceil(ids.length / 2));
    // a closed session stays listed: it is stored and can be loaded again
    for (const { sessionId } of [...mine, closed]) expect(ids).toContain(sessionId);
    const keys = listed.map((summary) => [Date.parse(summary.createdAt), summary.sessionId] as const);
    const sorted = [...keys].sort(([t1, id1], [t2, id2]) => t2 - t1 || (id1 < id2 ? 1 : id1 > id2 ? -1 : 0));
    expect(keys).toEqual(sorted);
    // the default page is 20 sessions; a live one carries its live summary, ISO times
    const first = await api(base, 'GET', listPath);
    expect(first.body.sessions.length).toBe(Math.min(20, ids.length));
    const live = first.body.sessions.find(
      (summary: { sessionId: string }) => summary.sessionId === mine[2]!.sessionId,
    );
    expect(live).toMatchObject({
      sessionId: mine[2]!.sessionId,
      workspaceCwd: workspace,
      createdAt: expect.stringMatching(ISO_TIME),
      updatedAt: expect.stringMatching(ISO_TIME),
      clientCount: 1,
      hasActivePrompt: false,
      isWaitingForPermission: false,
      pendingInteractionCount: 0,
      pendingInteractions: [],
    });
    const stored = first.body.sessions.find(
      (summary: { sessionId: string }) => summary.sessionId === closed.sessionId,
    );
    expect(stored).toMatchObject({ clientCount: 0, hasActivePrompt: false });
  });

  test('§4 the listing refuses bad input with 400 and a code naming it', async () => {
    const listPath = `/workspace/${encodeURIComponent(workspace)}/sessions`;
    for (const [query, code] of [
      ['?size=0', 'invalid_size'],
      ['?size=1001', 'invalid_size'],
      ['?size=ten', 'invalid_size'],
      ['?size=1&size=2', 'invalid_size'],
      ['?cursor=not-a-cursor', 'invalid_cursor'],
      ['?cursor=1', 'invalid_cursor'],
    ] as const) {
      const res = await api(base, 'GET', `${listPath}${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.code, query).toBe(code);
      expect(res.body.error, query).toMatch(code === 'invalid_size' ? /^size must be/ : /^cursor must be/);
    }
    const relative = await api(base, 'GET', `/workspace/${encodeURIComponent('rel/dir')}/sessions`);
    expect(relative.status).toBe(400);
    expect(relative.body.code).toBe('invalid_cwd');
    const foreign = await api(
      base,
      'GET',
      `/workspace/${encodeURIComponent('/definitely/elsewhere')}/sessions`,
    );
    expect(foreign.status).toBe(400);
    expect(foreign.body.code).toBe('workspace_mismatch');
  });

  test('§4 load and resume check the body cwd: its workspace attaches, anything else is a 400 with a code', async () => {
    const { sessionId } = await threadSession();
    for (const mode of ['load', 'resume'] as const) {
      const ok = await api(base, 'POST', `/session/${sessionId}/${mode}`, { body: { cwd: workspace } });
      expect(ok.status, mode).toBe(200);
      expect(ok.body, mode).toMatchObject({ sessionId, workspaceCwd: workspace, attached: true });
      for (const [cwd, code] of [
        ['relative/dir', 'invalid_cwd'],
        [5, 'invalid_cwd'],
        [null, 'invalid_cwd'],
        ['/definitely/elsewhere', 'workspace_mismatch'],
      ] as const) {
        const res = await api(base, 'POST', `/session/${sessionId}/${mode}`, { body: { cwd } });
        expect(res.status, `${mode} ${String(cwd)}`).toBe(400);
        expect(res.body.code, `${mode} ${String(cwd)}`).toBe(code);
        expect(res.body.error).toMatch(/cwd/);
      }
    }
    const status = await api(base, 'GET', `/session/${sessionId}/status`);
    expect(status.body.clientCount).toBe(3);
  });

  test('§1 a malformed X-Qwen-Client-Id is 400 invalid_client_id', async () => {
    const res = await api(base, 'POST', '/session', { body: {}, headers: { 'x-qwen-client-id': 'bad id!' } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_client_id');
  });
});

describe('bodies', () => {
  test('malformed JSON → 400 with the exact body', async () => {
    const res = await api(base, 'POST', '/session', { rawBody: '{"cwd":' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Invalid JSON in request body' });
  });

  test('a body over 10 MB → 413 {error}', async () => {
    const res = await api(base, 'POST', '/session', {
      rawBody: '{"x":"aaaa',
      declaredLength: 10 * 1024 * 1024 + 1,
    });
    expect(res.status).toBe(413);
    expect(res.body.error).toEqual(expect.any(String));
  });

  test('§5 prompt validation: not an array, empty, non-object block, a block without its ACP fields, bad deadline → 400', async () => {
    const { sessionId } = await threadSession();
    for (const body of [
      { prompt: 'hi' },
      { prompt: [] },
      { prompt: ['hi'] },
      {},
      { prompt: [{ type: 'text', text: 42 }] },
      { prompt: [{ type: 'text' }] },
      { prompt: [{ type: 'image', data: 'AAAA' }] },
      { prompt: [{ type: 'resource_link', uri: 'file:///a' }] },
      { prompt: [{ type: 'resource', resource: 'file:///a' }] },
    ]) {
      const res = await api(base, 'POST', `/session/${sessionId}/prompt`, { body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_prompt');
    }
    expect((await api(base, 'GET', `/session/${sessionId}/pending-prompts`)).body).toEqual({
      pendingPrompts: [],
    });
    // every ACP block type with its fields, and a type ACP does not define, are admitted
    const res = await api(base, 'POST', `/session/${sessionId}/prompt`, {
      body: {
        prompt: [
          { type: 'text', text: 'look' },
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          { type: 'resource_link', uri: 'file:///a', name: 'a' },
          { type: 'resource', resource: { uri: 'file:///b', text: 'b' } },
          { type: 'x-future', anything: 1 },
        ],
      },
    });
    expect(res.status).toBe(202);
    for (const deadlineMs of [0, -5, 1.5, 'soon']) {
      const res = await api(base, 'POST', `/session/${sessionId}/prompt`, {
        body: { ...textPrompt('x'), deadlineMs },
      });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_deadline_ms');
    }
  });
});

describe('prompts and events', () => {
  test('BP-8 prompt → 202 {promptId,lastEventId,eventEpoch}; replay from lastEventId shows the whole turn', async () => {
    const { sessionId } = await threadSession();
    const res = await api(base, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt('hello sluice') });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      promptId: expect.any(String),
      lastEventId: 0,
      eventEpoch: expect.any(String),
    });
    const stream = await openEvents(base, sessionId, {
      headers: { 'last-event-id': String(res.body.lastEventId), 'x-qwen-event-epoch': res.body.eventEpoch },
    });
    expect(stream.headers['content-type']).toBe('text/event-stream');
    expect(stream.headers['cache-control']).toBe('no-cache, no-transform');
    expect(stream.headers['x-accel-buffering']).toBe('no');
    expect(stream.headers['x-qwen-event-epoch']).toBe(res.body.eventEpoch);
    expect(stream.headers['x-qwen-sse-stream-id']).toMatch(/^[0-9a-f-]{36}$/);
    const done = await stream.waitFor((f) => f.event === 'turn_complete');
    stream.close();
    expect(stream.raw().startsWith('retry: 3000\n\n')).toBe(true);
    expect(done.data).toMatchObject({ v: 1, type: 'turn_complete', promptId: res.body.promptId });
    expect(done.data.data).toEqual({ sessionId, promptId: res.body.promptId, stopReason: 'end_turn' });
    const turn = stream.frames.filter((f) => f.id !== undefined);
    const kinds = turn.map(updateKind);
    expect(kinds[0]).toBe('user_message_chunk');
    expect(kinds.at(-1)).toBe('turn_complete');
    expect(new Set(kinds.slice(1, -1))).toEqual(new Set(['agent_message_chunk']));
    expect(turn.map((f) => f.id)).toEqual(kinds.map((_, i) => i + 1));
    const text = turn
      .slice(1, -1)
      .map((f) => f.data.data.update.content.text)
      .join('');
    expect(text).toBe('Echo: hello sluice');
    expect(stream.frames.find((f) => f.event === 'replay_complete')).toBeDefined();
  });

  test('§6 replay from Last-Event-ID n sends ids > n, then replay_complete', async () => {
    const { sessionId } = await threadSession();
    const live = await openEvents(base, sessionId);
    await api(base, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt('one') });
    const last = await live.waitFor((f) => f.event === 'turn_complete');
    live.close();
    const replay = await openEvents(base, sessionId, { headers: { 'last-event-id': '1' } });
    const complete = await replay.waitFor((f) => f.event === 'replay_complete');
    replay.close();
    const expected = live.frames.filter((f) => f.id !== undefined && f.id > 1);
    expect(expected.length).toBeGreaterThanOrEqual(2); // agent chunk(s), usage, turn_complete
    expect(replay.frames.filter((f) => f.id !== undefined)).toEqual(expected);
    expect(complete.id).toBeUndefined();
    expect(complete.data.data).toEqual({ lastReplayedEventId: last.id, replayedCount: expected.length });
  });

  test('§6 an epoch mismatch → state_resync_required {reason:epoch_reset} first, then the whole ring', async () => {
    const { sessionId } = await threadSession();
    const res = await api(base, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt('epoch') });
    const first = await openEvents(base, sessionId, { headers: { 'last-event-id': '0' } });
    await first.waitFor((f) => f.event === 'turn_complete');
    first.close();
    const stream = await openEvents(base, sessionId, {
      headers: { 'last-event-id': '2', 'x-qwen-event-epoch': '00000000-0000-4000-8000-000000000000' },
    });
    await stream.waitFor((f) => f.event === 'replay_complete');
    stream.close();
    expect(res.body.eventEpoch).not.toBe('00000000-0000-4000-8000-000000000000');
    expect(stream.frames[0]!.event).toBe('state_resync_required');
    expect(stream.frames[0]!.data.data).toMatchObject({
      reason: 'epoch_reset',
      lastDeliveredId: 2,
      earliestAvailableId: 1,
    });
    const ids = first.frames.filter((f) => f.id !== undefined).map((f) => f.id);
    expect(stream.frames.filter((f) => f.id !== undefined).map((f) => f.id)).toEqual(ids);
  });

  test('invalid maxQueued → 400 invalid_max_queued; invalid Last-Event-ID → 400', async () => {
    const { sessionId } = await threadSession();
    await expect(openEvents(base, sessionId, { query: '?maxQueued=3' })).rejects.toMatchObject({
      status: 400,
    });
    await expect(openEvents(base, sessionId, { headers: { 'last-event-id': 'abc' } })).rejects.toMatchObject({
      status: 400,
    });
  });

  test('the SSE stream sends heartbeat comments (interval configurable)', async () => {
    const { sessionId } = await threadSession();
    const stream = await openEvents(base, sessionId);
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (stream.raw().includes(': heartbeat\n\n')) {
          clearInterval(poll);
          resolve();
        }
      }, 5);
    });
    stream.close();
    expect(stream.raw().startsWith('retry: 3000\n\n')).toBe(true);
  });

  test('§4 DELETE /session → 204; session_closed on the stream, the stream ends, then 404', async () => {
    const { sessionId } = await threadSession();
    const stream = await openEvents(base, sessionId);
    const res = await api(base, 'DELETE', `/session/${sessionId}`);
    expect(res.status).toBe(204);
    const closed = await stream.waitFor((f) => f.event === 'session_closed');
    expect(closed.data.data).toMatchObject({ sessionId, reason: expect.any(String) });
    await stream.ended;
    const status = await api(base, 'GET', `/session/${sessionId}/status`);
    expect(status.status).toBe(404);
  });

  test('BP-3 §7 POST /session/:id/branch → 201 with a copy of the conversation and the §7 shape', async () => {
    const { sessionId } = await threadSession();
    const live = await openEvents(base, sessionId);
    await api(base, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt('before the fork') });
    await live.waitFor((f) => f.event === 'turn_complete');
    live.close();
    const res = await api(base, 'POST', `/session/${sessionId}/branch`, { body: { name: 'experiment' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      sessionId: expect.any(String),
      workspaceCwd: workspace,
      attached: false,
      clientId: expect.any(String),
      createdAt: expect.stringMatching(ISO_TIME),
      lastEventId: 0,
      eventEpoch: expect.any(String),
      displayName: 'experiment',
      forkedFrom: { sessionId },
    });
    const status = await api(base, 'GET', `/session/${res.body.sessionId}/status`);
    expect(status.body).toMatchObject({ forkedFrom: { sessionId }, displayName: 'experiment' });
    // the branch has the conversation: the echo model answers the new prompt after it
    const branchStream = await openEvents(base, res.body.sessionId);
    await api(base, 'POST', `/session/${res.body.sessionId}/prompt`, { body: textPrompt('after') });
    await branchStream.waitFor((f) => f.event === 'turn_complete');
    branchStream.close();
  });

  test('§5 cancel with nothing running is still 204', async () => {
    const { sessionId } = await threadSession();
    const res = await api(base, 'POST', `/session/${sessionId}/cancel`, { body: {} });
    expect(res.status).toBe(204);
  });
});
