import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, test } from 'vitest';
import { api, openEvents, textPrompt } from '../helpers/http-client.js';
import { startSluice } from '../helpers/sluice-process.js';

// SIGTERM/SIGINT drain (issue 3, "HTTP server and CLI"): stop admitting, finish or cancel
// turns, flush the journal, exit 0. Each test owns its data dir, which outlives the process so
// that the journal can be read after the exit.
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-drain-'));
  dirs.push(dir);
  return dir;
}

/** What the journal and the session store hold for `sessionId` (read-only, after the exit). */
function onDisk(dir: string, sessionId: string) {
  const db = new Database(join(dir, 'journal.db'), { readonly: true, fileMustExist: true });
  try {
    const records = db
      .prepare('SELECT type, body FROM journal_records WHERE session_id = ? ORDER BY seq')
      .all(sessionId) as Array<{ type: string; body: string }>;
    const messages = db
      .prepare('SELECT role, content FROM sluice_session_messages WHERE session_id = ? ORDER BY seq')
      .all(sessionId);
    return { records: records.map((r) => ({ type: r.type, ...JSON.parse(r.body) })), messages };
  } finally {
    db.close();
  }
}

/** A daemon on its own data dir whose one session runs `text` as a turn that has begun. */
async function turnUnderWay(echoDelayMs: number, text: string) {
  const dir = dataDir();
  const sluice = await startSluice([
    '--data-dir',
    dir,
    '--echo-delay-ms',
    String(echoDelayMs),
    '--drain-timeout-ms',
    '60000',
  ]);
  const { sessionId } = (await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread' } }))
    .body;
  const stream = await openEvents(sluice.url, sessionId);
  const prompt = await api(sluice.url, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt(text) });
  expect(prompt.status).toBe(202);
  await stream.waitFor((f) => f.event === 'session_update' && f.data.promptId === prompt.body.promptId);
  return { dir, sluice, sessionId, stream, prompt };
}

describe('SIGTERM / SIGINT drain', () => {
  test('SIGTERM: new sessions and prompts get 503 while draining; the running turn may still be cancelled; exit 0', async () => {
    const { dir, sluice, sessionId, stream, prompt } = await turnUnderWay(60_000, 'long');

    sluice.child.kill('SIGTERM');
    await expect.poll(() => sluice.stderr()).toContain('SIGTERM, draining');
    // stop admitting: the refusal names the reason and says when to retry
    for (const [path, body] of [
      ['/session', { sessionScope: 'thread' }],
      [`/session/${sessionId}/prompt`, textPrompt('too late')],
    ] as const) {
      const refused = await api(sluice.url, 'POST', path, { body });
      expect(refused.status, path).toBe(503);
      expect(refused.headers['retry-after'], path).toBe('5');
      expect(refused.body, path).toEqual({
        error: 'The daemon is shutting down',
        code: 'daemon_shutting_down',
      });
    }
    // the running turn is still the client's to cancel: it ends as a cancel, not as a close
    expect((await api(sluice.url, 'POST', `/session/${sessionId}/cancel`)).status).toBe(204);
    expect(await sluice.exited).toBe(0);
    await stream.ended;
    const terminal = stream.frames.filter((f) => /^turn_/.test(f.event));
    expect(terminal.map((f) => [f.event, f.data.data.stopReason])).toEqual([['turn_complete', 'cancelled']]);
    expect(stream.frames.at(-1)?.data.data).toMatchObject({ sessionId, reason: 'daemon_shutdown' });
    // the refused prompt left no trace: every event with an id belongs to the admitted one
    for (const frame of stream.frames.filter((f) => f.id !== undefined && f.data.promptId !== undefined))
      expect(frame.data.promptId).toBe(prompt.body.promptId);
    // the journal was flushed: the cancelled call has its request and its result
    const { records } = onDisk(dir, sessionId);
    expect(records.map((r) => r.type)).toEqual(['model_request', 'model_result']);
  });

  test('SIGINT: a running turn finishes (end_turn) before the exit 0; journal and conversation are on disk', async () => {
    const { dir, sluice, sessionId, stream } = await turnUnderWay(300, 'finish me');
    expect(await sluice.stop('SIGINT')).toBe(0);
    await stream.ended;
    const terminal = stream.frames.filter((f) => /^turn_/.test(f.event));
    expect(terminal.map((f) => [f.event, f.data.data.stopReason])).toEqual([['turn_complete', 'end_turn']]);
    expect(stream.frames.at(-1)?.event).toBe('session_closed');
    expect(sluice.stderr()).toContain('SIGINT, draining');
    const { records, messages } = onDisk(dir, sessionId);
    expect(records.map((r) => r.type)).toEqual(['model_request', 'model_result']);
    expect(records[1]).toMatchObject({ stopReason: 'end_turn' });
    expect(messages).toEqual([
      { role: 'user', content: 'finish me' },
      { role: 'assistant', content: 'Echo: finish me' },
    ]);
  });
});
