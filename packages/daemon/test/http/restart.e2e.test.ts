import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DaemonClient, DaemonSessionClient } from '@qwen-code/sdk/daemon';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { api, openEvents, textPrompt, type EventStream, type SseFrame } from '../helpers/http-client.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';
import { storedMessages } from '../helpers/stored-session.js';

// One data dir and one workspace shared by two daemon lifetimes: the first runs turns and is
// stopped with SIGTERM, the second restores the session from the SQLite store.
const ECHO_DELAY_MS = 120;
let dataDir: string;
let workspace: string;
let first: SluiceProcess | undefined;
let second: SluiceProcess | undefined;

const serveArgs = (): string[] => [
  // a later --data-dir wins over the helper's own temporary one
  '--data-dir',
  dataDir,
  '--workspace',
  workspace,
  '--echo-delay-ms',
  String(ECHO_DELAY_MS),
  '--drain-timeout-ms',
  '0',
];

beforeAll(async () => {
  dataDir = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-restart-data-')));
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-restart-ws-')));
  first = await startSluice(serveArgs());
});

afterAll(async () => {
  await Promise.all([first?.stop(), second?.stop()]);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

const terminal = (f: SseFrame): boolean => f.event === 'turn_complete' || f.event === 'turn_error';

const agentText = (frames: SseFrame[], promptId: string): string =>
  frames
    .filter(
      (f) =>
        f.event === 'session_update' &&
        f.data.promptId === promptId &&
        f.data.data.update.sessionUpdate === 'agent_message_chunk',
    )
    .map((f) => f.data.data.update.content.text)
    .join('');

async function runTurn(base: string, sessionId: string, stream: EventStream, text: string): Promise<string> {
  const res = await api(base, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt(text) });
  expect(res.status).toBe(202);
  const done = await stream.waitFor(
    (f) => f.event === 'turn_complete' && f.data.promptId === res.body.promptId,
  );
  expect(done.data.data.stopReason).toBe('end_turn');
  return res.body.promptId;
}

describe('exactly one terminal event per admitted prompt', () => {
  test('§5 a burst of 5 prompts on one session: 5 terminal events in FIFO order, each with its promptId', async () => {
    const base = first!.url;
    const session = await api(base, 'POST', '/session', { body: { sessionScope: 'thread' } });
    const sessionId: string = session.body.sessionId;
    const stream = await openEvents(base, sessionId);
    const promptIds: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await api(base, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt(`burst ${i}`) });
      expect(res.status).toBe(202);
      promptIds.push(res.body.promptId);
    }
    expect(new Set(promptIds).size).toBe(5);
    await stream.waitFor((f) => terminal(f) && f.data.promptId === promptIds[4]);
    // let anything that would (wrongly) follow arrive: one more turn acts as a barrier
    const barrier = await runTurn(base, sessionId, stream, 'barrier');
    stream.close();

    const terminals = stream.frames.filter(terminal);
    expect(terminals.map((f) => f.data.promptId)).toEqual([...promptIds, barrier]);
    for (const [i, frame] of terminals.entries()) {
      expect(frame.event).toBe('turn_complete');
      // the envelope and the data both carry the promptId
      expect(frame.data.data).toEqual({ sessionId, promptId: frame.data.promptId, stopReason: 'end_turn' });
      if (i < 5) expect(agentText(stream.frames, promptIds[i]!)).toBe(`Echo: burst ${i}`);
    }
    // the turns ran one at a time: every event of prompt i precedes every event of prompt i+1,
    // except the pending_prompt_added published at admission
    const turnEvents = stream.frames.filter(
      (f) => f.id !== undefined && f.event !== 'pending_prompt_added' && f.data.promptId !== barrier,
    );
    const order = turnEvents.map((f) => promptIds.indexOf(f.data.promptId));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order.every((i) => i >= 0)).toBe(true);
    // the queued ones (all but the first, the echo model takes 120 ms) were announced and completed
    for (const id of promptIds.slice(1)) {
      expect(
        stream.frames.filter((f) => f.event === 'pending_prompt_added' && f.data.promptId === id),
      ).toHaveLength(1);
      const completed = stream.frames.filter(
        (f) => f.event === 'pending_prompt_completed' && f.data.promptId === id,
      );
      expect(completed.map((f) => f.data.data.state)).toEqual(['completed']);
    }
    const ids = stream.frames.filter((f) => f.id !== undefined).map((f) => f.id);
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    await api(base, 'DELETE', `/session/${sessionId}`);
  });
});

describe('restart + load', () => {
  test('§4 restart + load: a session survives SIGTERM and a restart on the same --data-dir, is listed, and load/resume restore it', async () => {
    // ── first lifetime: one turn, then SIGTERM ─────────────────────────────────────────
    const created = await api(first!.url, 'POST', '/session', { body: { sessionScope: 'thread' } });
    expect(created.status).toBe(200);
    const sessionId: string = created.body.sessionId;
    const createdAt: string = created.body.createdAt;
    expect(new Date(createdAt).toISOString()).toBe(createdAt);
    const stream = await openEvents(first!.url, sessionId);
    await runTurn(first!.url, sessionId, stream, 'first turn');
    stream.close();
    expect(await first!.stop('SIGTERM')).toBe(0);
    expect(storedMessages(dataDir, sessionId)).toEqual([
      { role: 'user', content: 'first turn' },
      { role: 'assistant', content: 'Echo: first turn' },
    ]);

    // ── second lifetime on the same data dir ─────────────────────────────────────────
    second = await startSluice(serveArgs());
    const base = second.url;
    const listPath = `/workspace/${encodeURIComponent(workspace)}/sessions`;
    // §4 the listing holds the stored sessions, so a client that lost the id finds it to load
    const listedBefore = await api(base, 'GET', listPath);
    expect(listedBefore.status).toBe(200);
    const storedIds = listedBefore.body.sessions.map((s: { sessionId: string }) => s.sessionId);
    // newest first: this session, then the burst test's one (closed before the restart) if it ran
    expect(storedIds[0]).toBe(sessionId);
    expect(listedBefore.body.sessions[0]).toEqual({
      sessionId,
      workspaceCwd: workspace,
      cwd: workspace,
      createdAt,
      updatedAt: expect.stringMatching(/Z$/),
      // the catalogue's default model, stored with the session when it was created
      model: 'echo-1',
      clientCount: 0,
      hasActivePrompt: false,
      pendingPromptCount: 0,
      isWaitingForPermission: false,
      pendingInteractionCount: 0,
      pendingInteractions: [],
    });
    expect(listedBefore.body.nextCursor).toBeUndefined();
    // the official client reads the same listing
    const viaSdk = await new DaemonClient({ baseUrl: base }).listWorkspaceSessions(workspace);
    expect(viaSdk.map((summary) => summary.sessionId)).toEqual(storedIds);
    // not live yet: session routes answer 404 until it is loaded
    expect((await api(base, 'GET', `/session/${sessionId}/status`)).status).toBe(404);
    // a cwd outside the served workspace is refused before anything is opened
    const elsewhere = await api(base, 'POST', `/session/${sessionId}/load`, { body: { cwd: '/elsewhere' } });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.code).toBe('workspace_mismatch');
    expect((await api(base, 'GET', `/session/${sessionId}/status`)).status).toBe(404);

    const loaded = await api(base, 'POST', `/session/${sessionId}/load`, { body: { cwd: workspace } });
    expect(loaded.status).toBe(200);
    expect(loaded.body).toEqual({
      sessionId,
      workspaceCwd: workspace,
      attached: false,
      clientId: expect.any(String),
      createdAt,
      lastEventId: 2,
      eventEpoch: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });

    const resumed = await api(base, 'POST', `/session/${sessionId}/resume`, { body: {} });
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({
      sessionId,
      workspaceCwd: workspace,
      attached: true,
      createdAt,
      lastEventId: 2,
      eventEpoch: loaded.body.eventEpoch,
    });
    expect(resumed.body.clientId).toEqual(expect.any(String));
    expect(resumed.body.clientId).not.toBe(loaded.body.clientId);

    const status = await api(base, 'GET', `/session/${sessionId}/status`);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ sessionId, workspaceCwd: workspace, createdAt, clientCount: 2 });
    const listed = await api(base, 'GET', listPath);
    expect(listed.body.sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual(storedIds);
    expect(listed.body.sessions[0]).toMatchObject({ sessionId, clientCount: 2 });

    // load replays the history as session_update events 1..lastEventId
    const restored = await openEvents(base, sessionId, {
      headers: { 'last-event-id': '0', 'x-qwen-event-epoch': loaded.body.eventEpoch },
    });
    await restored.waitFor((f) => f.event === 'replay_complete');
    expect(
      restored.frames
        .filter((f) => f.id !== undefined)
        .map((f) => [f.data.data.update.sessionUpdate, f.data.data.update.content.text]),
    ).toEqual([
      ['user_message_chunk', 'first turn'],
      ['agent_message_chunk', 'Echo: first turn'],
    ]);

    // a prompt after load continues the conversation (sent with the resumed client id)
    const prompt = await api(base, 'POST', `/session/${sessionId}/prompt`, {
      body: textPrompt('second turn'),
      headers: { 'x-qwen-client-id': resumed.body.clientId },
    });
    expect(prompt.status).toBe(202);
    expect(prompt.body).toMatchObject({ lastEventId: 2, eventEpoch: loaded.body.eventEpoch });
    const done = await restored.waitFor((f) => terminal(f) && f.data.promptId === prompt.body.promptId);
    expect(done.data.data).toEqual({ sessionId, promptId: prompt.body.promptId, stopReason: 'end_turn' });
    expect(agentText(restored.frames, prompt.body.promptId)).toBe('Echo: second turn');
    restored.close();

    // an id the store does not have
    const unknown = '00000000-0000-4000-8000-000000000001';
    const missing = await api(base, 'POST', `/session/${unknown}/load`, { body: {} });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      error: `No session with id "${unknown}"`,
      code: 'session_not_found',
      sessionId: unknown,
    });

    // the official session client still holding the first lifetime's clientId: its prompt gets
    // 400 invalid_client_id, it resumes (fresh clientId) and retries once (PROTOCOL §1)
    const stale = new DaemonSessionClient({
      client: new DaemonClient({ baseUrl: base }),
      session: created.body,
    });
    expect(stale.clientId).toBe(created.body.clientId);
    await expect(stale.prompt(textPrompt('third turn'))).resolves.toMatchObject({ stopReason: 'end_turn' });
    expect(stale.clientId).not.toBe(created.body.clientId);

    expect(await second.stop('SIGTERM')).toBe(0);
    expect(storedMessages(dataDir, sessionId)).toEqual([
      { role: 'user', content: 'first turn' },
      { role: 'assistant', content: 'Echo: first turn' },
      { role: 'user', content: 'second turn' },
      { role: 'assistant', content: 'Echo: second turn' },
      { role: 'user', content: 'third turn' },
      { role: 'assistant', content: 'Echo: third turn' },
    ]);
  });
});
