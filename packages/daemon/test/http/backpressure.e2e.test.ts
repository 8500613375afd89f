import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { api, openEvents, textPrompt, type EventStream } from '../helpers/http-client.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

// The echo model waits a minute before answering, so admitted prompts stay pending.
let sluice: SluiceProcess;
let base: string;

beforeAll(async () => {
  sluice = await startSluice(['--echo-delay-ms', '60000', '--drain-timeout-ms', '0']);
  base = sluice.url;
});

afterAll(async () => {
  await sluice?.stop();
});

async function sessionWithStream(): Promise<{ sessionId: string; clientId: string; stream: EventStream }> {
  const res = await api(base, 'POST', '/session', { body: { sessionScope: 'thread' } });
  const stream = await openEvents(base, res.body.sessionId);
  return { ...res.body, stream };
}

async function admit(sessionId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await api(base, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt(`prompt ${i}`) });
    expect(res.status).toBe(202);
    ids.push(res.body.promptId);
  }
  return ids;
}

describe('BP per-session admission over HTTP', () => {
  test('BP-1/BP-8 the 6th pending prompt → 503, Retry-After: 5, exact body, no promptId and no event', async () => {
    const { sessionId, stream } = await sessionWithStream();
    const admitted = await admit(sessionId, 5);
    await stream.waitFor((f) => f.event === 'pending_prompt_added' && f.data.promptId === admitted[4]);

    const refused = await api(base, 'POST', `/session/${sessionId}/prompt`, {
      body: textPrompt('one too many'),
    });
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(refused.text).toBe(
      JSON.stringify({
        error: `Prompt queue full for session "${sessionId}" (5/5 pending)`,
        code: 'prompt_queue_full',
        sessionId,
        limit: 5,
        pendingCount: 5,
      }),
    );
    // Refused again while the count stands: the very same answer (the refusal is prepared once).
    const refusedAgain = await api(base, 'POST', `/session/${sessionId}/prompt`, {
      body: textPrompt('still too many'),
    });
    expect([refusedAgain.status, refusedAgain.headers['retry-after'], refusedAgain.text]).toEqual([
      503,
      '5',
      refused.text,
    ]);

    const pending = await api(base, 'GET', `/session/${sessionId}/pending-prompts`);
    expect(pending.body.pendingPrompts.map((p: { promptId: string }) => p.promptId)).toEqual(admitted);
    expect(pending.body.pendingPrompts.map((p: { state: string }) => p.state)).toEqual([
      'running',
      'queued',
      'queued',
      'queued',
      'queued',
    ]);

    // removing a queued prompt: pending_prompt_completed {removed} + turn_complete {cancelled}
    const removed = await api(base, 'DELETE', `/session/${sessionId}/pending-prompts/${admitted[2]}`);
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ removed: true });
    const completed = await stream.waitFor((f) => f.event === 'pending_prompt_completed');
    expect(completed.data.data).toEqual({ sessionId, promptId: admitted[2], state: 'removed' });
    const cancelled = stream.frames.find(
      (f) => f.event === 'turn_complete' && f.data.promptId === admitted[2],
    );
    expect(cancelled?.data.data.stopReason).toBe('cancelled');
    const again = await api(base, 'DELETE', `/session/${sessionId}/pending-prompts/${admitted[2]}`);
    expect(again.body).toEqual({ removed: false });

    // every event so far belongs to an admitted prompt, ids contiguous: the refused one left no trace
    const withIds = stream.frames.filter((f) => f.id !== undefined);
    expect(withIds.map((f) => f.id)).toEqual(withIds.map((_, i) => i + 1));
    for (const frame of withIds) expect(admitted).toContain(frame.data.promptId);
    stream.close();
    await api(base, 'DELETE', `/session/${sessionId}`);
  });

  test('§5 POST /cancel → 204; the running prompt ends turn_complete cancelled and the next one starts', async () => {
    const { sessionId, stream } = await sessionWithStream();
    const [first, second] = await admit(sessionId, 2);
    const res = await api(base, 'POST', `/session/${sessionId}/cancel`);
    expect(res.status).toBe(204);
    await stream.waitFor((f) => f.event === 'prompt_cancelled' && f.data.promptId === first);
    const done = await stream.waitFor((f) => f.event === 'turn_complete' && f.data.promptId === first);
    expect(done.data.data.stopReason).toBe('cancelled');
    await stream.waitFor((f) => f.event === 'pending_prompt_started' && f.data.promptId === second);
    stream.close();
    await api(base, 'DELETE', `/session/${sessionId}`);
  });

  test('BP-3 branch while a prompt is pending → 409 branch_while_prompt_active', async () => {
    const { sessionId, stream } = await sessionWithStream();
    await admit(sessionId, 1);
    const res = await api(base, 'POST', `/session/${sessionId}/branch`, { body: {} });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('branch_while_prompt_active');
    stream.close();
    await api(base, 'DELETE', `/session/${sessionId}`);
  });

  test('§4 DELETE /session ends every pending prompt with turn_error session_closed, then session_closed', async () => {
    const { sessionId, stream } = await sessionWithStream();
    const admitted = await admit(sessionId, 3);
    const res = await api(base, 'DELETE', `/session/${sessionId}`);
    expect(res.status).toBe(204);
    await stream.waitFor((f) => f.event === 'session_closed');
    await stream.ended;
    const errors = stream.frames.filter((f) => f.event === 'turn_error');
    expect(errors.map((f) => f.data.promptId).sort()).toEqual([...admitted].sort());
    for (const e of errors) expect(e.data.data.code).toBe('session_closed');
    expect(stream.frames.at(-1)?.event).toBe('session_closed');
  });

  test("§6 a client reconnecting right after DELETE still replays its prompts' turn_error and session_closed; unknown ids stay 404", async () => {
    const { sessionId, stream } = await sessionWithStream();
    stream.close();
    const first = await api(base, 'POST', `/session/${sessionId}/prompt`, {
      body: textPrompt('closed under me'),
    });
    expect(first.status).toBe(202);
    const { promptId, lastEventId } = first.body as { promptId: string; lastEventId: number };
    expect((await api(base, 'DELETE', `/session/${sessionId}`)).status).toBe(204);
    await expect.poll(async () => (await api(base, 'GET', `/session/${sessionId}/status`)).status).toBe(404);

    const replay = await openEvents(base, sessionId, { headers: { 'last-event-id': String(lastEventId) } });
    await replay.ended;
    const terminal = replay.frames.filter((f) => f.data?.promptId === promptId && /^turn_/.test(f.event));
    expect(terminal.map((f) => [f.event, f.data.data.code])).toEqual([['turn_error', 'session_closed']]);
    expect(replay.frames.map((f) => f.event)).toContain('session_closed');
    expect(replay.frames.at(-1)?.event).toBe('replay_complete');

    const unknown = await api(base, 'GET', '/session/00000000-0000-4000-8000-000000000000/events');
    expect(unknown.status).toBe(404);
  });

  test('§4 the status shows hasActivePrompt while a prompt runs', async () => {
    const { sessionId, stream } = await sessionWithStream();
    await admit(sessionId, 1);
    await stream.waitFor((f) => f.event === 'session_update');
    const status = await api(base, 'GET', `/session/${sessionId}/status`);
    expect(status.body).toMatchObject({ hasActivePrompt: true });
    stream.close();
    await api(base, 'DELETE', `/session/${sessionId}`);
  });
});

describe('shutdown', () => {
  test('SIGTERM drains with --drain-timeout-ms 0: pending prompts end session_closed, streams get session_closed, exit 0', async () => {
    const own = await startSluice(['--echo-delay-ms', '60000', '--drain-timeout-ms', '0']);
    const session = await api(own.url, 'POST', '/session', { body: {} });
    const stream = await openEvents(own.url, session.body.sessionId);
    const prompt = await api(own.url, 'POST', `/session/${session.body.sessionId}/prompt`, {
      body: textPrompt('x'),
    });
    expect(prompt.status).toBe(202);
    await stream.waitFor((f) => f.event === 'session_update');
    const code = await own.stop('SIGTERM');
    expect(code).toBe(0);
    await stream.ended;
    const terminal = stream.frames.find((f) => f.event === 'turn_error');
    expect(terminal?.data.data).toMatchObject({ code: 'session_closed', promptId: prompt.body.promptId });
    expect(stream.frames.at(-1)?.event).toBe('session_closed');
    expect(own.stdout()).toBe(`sluice listening on ${own.url}\n`);
  });
});
