import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { api, openEvents, textPrompt, type EventStream, type SseFrame } from '../helpers/http-client.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

// The bounds of issue 3 over real HTTP against the started CLI: the session caps (PROTOCOL §4),
// the event ring (--event-ring-size, §6), the per-subscriber queue and the subscriber cap (§6).

const terminal = (f: SseFrame): boolean => f.event === 'turn_complete' || f.event === 'turn_error';

async function threadSession(base: string): Promise<string> {
  const res = await api(base, 'POST', '/session', { body: { sessionScope: 'thread' } });
  expect(res.status).toBe(200);
  return res.body.sessionId;
}

async function runTurn(base: string, sessionId: string, stream: EventStream, text: string): Promise<string> {
  const res = await api(base, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt(text) });
  expect(res.status).toBe(202);
  const done = await stream.waitFor((f) => terminal(f) && f.data.promptId === res.body.promptId);
  expect(done.event).toBe('turn_complete');
  return res.body.promptId;
}

describe('§4 session caps', () => {
  test('§4 --max-sessions: one more session → 503 session_limit_exceeded with Retry-After: 5; closing one makes room', async () => {
    const sluice = await startSluice(['--max-sessions', '2']);
    try {
      const first = await threadSession(sluice.url);
      await threadSession(sluice.url);
      const refused = await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread' } });
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('5');
      expect(refused.body).toEqual({
        error: 'Session limit reached (2 sessions)',
        code: 'session_limit_exceeded',
        limit: 2,
        scope: 'daemon',
      });
      // a branch needs a session too
      const branch = await api(sluice.url, 'POST', `/session/${first}/branch`, { body: {} });
      expect(branch.status).toBe(503);
      expect(branch.body.code).toBe('session_limit_exceeded');
      expect((await api(sluice.url, 'GET', '/capabilities')).body.limits.maxSessions).toBe(2);
      expect((await api(sluice.url, 'DELETE', `/session/${first}`)).status).toBe(204);
      await expect
        .poll(
          async () =>
            (await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread' } })).status,
        )
        .toBe(200);
    } finally {
      await sluice.stop();
    }
  });

  test('§4 --max-sessions-per-workspace: the workspace cap answers the same 503 with scope workspace; attaching is free', async () => {
    const sluice = await startSluice(['--max-sessions-per-workspace', '1']);
    try {
      const single = await api(sluice.url, 'POST', '/session', { body: {} });
      expect(single.status).toBe(200);
      const refused = await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread' } });
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('5');
      expect(refused.body).toMatchObject({ code: 'session_limit_exceeded', limit: 1, scope: 'workspace' });
      // single scope attaches to the default session: no new session, no refusal
      const attached = await api(sluice.url, 'POST', '/session', { body: {} });
      expect(attached.body).toMatchObject({ sessionId: single.body.sessionId, attached: true });
    } finally {
      await sluice.stop();
    }
  });
});

describe('§6 the event ring and the subscriber bounds', () => {
  let sluice: SluiceProcess;
  beforeAll(async () => {
    sluice = await startSluice(['--event-ring-size', '16']);
  });
  afterAll(async () => {
    await sluice?.stop();
  });

  test('§6 --event-ring-size 16: a cursor older than the ring gets state_resync_required ring_evicted, then the 16 kept events', async () => {
    const sessionId = await threadSession(sluice.url);
    const live = await openEvents(sluice.url, sessionId);
    await runTurn(sluice.url, sessionId, live, 'a prompt long enough for many chunks '.repeat(12));
    live.close();
    const lastId = Math.max(...live.frames.filter((f) => f.id !== undefined).map((f) => f.id!));
    expect(lastId).toBeGreaterThan(20);
    const epoch = live.headers['x-qwen-event-epoch'] as string;
    const replay = await openEvents(sluice.url, sessionId, {
      headers: { 'last-event-id': '1', 'x-qwen-event-epoch': epoch },
    });
    const complete = await replay.waitFor((f) => f.event === 'replay_complete');
    replay.close();
    expect(replay.frames[0]).toMatchObject({
      event: 'state_resync_required',
      data: { data: { reason: 'ring_evicted', lastDeliveredId: 1, earliestAvailableId: lastId - 15 } },
    });
    expect(replay.frames[0]!.id).toBeUndefined();
    const replayed = replay.frames.filter((f) => f.id !== undefined).map((f) => f.id);
    expect(replayed).toEqual(Array.from({ length: 16 }, (_, i) => lastId - 15 + i));
    expect(complete.data.data).toEqual({ lastReplayedEventId: lastId, replayedCount: 16 });
    // the replayed events are the ones the live reader saw
    expect(replay.frames.filter((f) => f.id !== undefined)).toEqual(
      live.frames.filter((f) => f.id !== undefined && f.id > lastId - 16),
    );
  });

  test('§6 a reader that keeps reading gets a long answer whole, with the smallest queue, although the echo model answers at once', async () => {
    const sessionId = await threadSession(sluice.url);
    const reader = await openEvents(sluice.url, sessionId, { query: '?maxQueued=16' });
    // ~2 500 chunk events in one answer: published in one turn of the loop, no socket could
    // flush before the 16-frame queue overflowed
    const words = 'word '.repeat(8_000);
    const res = await api(sluice.url, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt(words) });
    expect(res.status).toBe(202);
    const done = await reader.waitFor((f) => terminal(f) && f.data.promptId === res.body.promptId);
    reader.close();
    expect(done.event).toBe('turn_complete');
    expect(reader.frames.some((f) => f.event === 'client_evicted' || f.event === 'slow_client_warning')).toBe(
      false,
    );
    const answer = reader.frames
      .filter(
        (f) => f.event === 'session_update' && f.data.data.update.sessionUpdate === 'agent_message_chunk',
      )
      .map((f) => f.data.data.update.content.text)
      .join('');
    expect(answer).toBe(`Echo: ${words}`);
  });

  test('§6 a reader that stops reading is warned, then evicted at maxQueued; another session is not held up', async () => {
    const sessionId = await threadSession(sluice.url);
    const stalled = await openEvents(sluice.url, sessionId, { query: '?maxQueued=16', paused: true });
    // ~32 000 chunk events (about 10 MB of SSE): far more than the socket buffers absorb, so
    // the daemon's writer for the stalled reader blocks and its bounded queue overflows
    const prompt = await api(sluice.url, 'POST', `/session/${sessionId}/prompt`, {
      body: textPrompt('x'.repeat(512 * 1024)),
    });
    expect(prompt.status).toBe(202);
    const promptId: string = prompt.body.promptId;
    await expect
      .poll(async () => (await api(sluice.url, 'GET', `/session/${sessionId}/pending-prompts`)).body, {
        timeout: 30_000,
      })
      .toEqual({ pendingPrompts: [] });

    // while that reader is still stalled, another session runs a turn to its end
    const other = await threadSession(sluice.url);
    const otherStream = await openEvents(sluice.url, other);
    await runTurn(sluice.url, other, otherStream, 'not held up');
    otherStream.close();

    // the stalled reader, read at last: a prefix of the session's events, one warning, the
    // eviction, and the end of the stream — never the rest of the turn
    stalled.resume();
    await stalled.ended;
    const evicted = stalled.frames.at(-1)!;
    expect(evicted.event).toBe('client_evicted');
    expect(evicted.id).toBeUndefined();
    const received = stalled.frames.filter((f) => f.id !== undefined).map((f) => f.id!);
    expect(received).toEqual(received.map((_, i) => i + 1));
    expect(evicted.data.data).toMatchObject({
      reason: 'queue_overflow',
      droppedAfter: received.at(-1),
      maxQueued: 16,
    });
    expect(stalled.frames.filter((f) => f.event === 'slow_client_warning')).toHaveLength(1);
    expect(stalled.frames.some((f) => terminal(f) && f.data.promptId === promptId)).toBe(false);
    // reconnecting from where it was dropped: that part has left the 16-event ring, so it is
    // told to resync and gets what the ring kept, the turn's terminal event included
    const resumed = await openEvents(sluice.url, sessionId, {
      headers: { 'last-event-id': String(evicted.data.data.droppedAfter) },
    });
    await resumed.waitFor((f) => f.event === 'replay_complete');
    resumed.close();
    expect(resumed.frames[0]?.data.data).toMatchObject({ reason: 'ring_evicted' });
    expect(resumed.frames.filter((f) => terminal(f)).map((f) => [f.event, f.data.promptId])).toEqual([
      ['turn_complete', promptId],
    ]);
  });

  test('§6 the 65th subscriber of a session → 429 subscriber_limit_exceeded with Retry-After; another session is unaffected', async () => {
    const sessionId = await threadSession(sluice.url);
    const streams = await Promise.all(Array.from({ length: 64 }, () => openEvents(sluice.url, sessionId)));
    try {
      const refused = await api(sluice.url, 'GET', `/session/${sessionId}/events`);
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('5');
      expect(refused.body).toMatchObject({ code: 'subscriber_limit_exceeded' });
      expect(refused.body.error).toMatch(/64/);
      const elsewhere = await openEvents(sluice.url, await threadSession(sluice.url));
      elsewhere.close();
      // closing one gives its place back
      streams.pop()!.close();
      await expect
        .poll(async () => {
          try {
            const again = await openEvents(sluice.url, sessionId);
            streams.push(again);
            return true;
          } catch {
            return false;
          }
        })
        .toBe(true);
    } finally {
      for (const stream of streams) stream.close();
    }
  });
});
