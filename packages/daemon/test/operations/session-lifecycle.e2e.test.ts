import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteJournal, type JournalRecord } from '@sluice/runtime';
import Database from 'better-sqlite3';
import { afterAll, expect, test } from 'vitest';
import { api, textPrompt } from '../helpers/http-client.js';
import { waitForLogLine } from '../helpers/log-lines.js';
import { startSluice } from '../helpers/sluice-process.js';

const scratch = mkdtempSync(join(tmpdir(), 'sluice-lifecycle-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs one prompt to its end on a new thread session and returns the session's id. */
async function sessionWithTurn(url: string, text: string): Promise<string> {
  const sessionId = (await api(url, 'POST', '/session', { body: { sessionScope: 'thread' } })).body
    .sessionId as string;
  expect((await api(url, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt(text) })).status).toBe(
    202,
  );
  await expect
    .poll(async () => (await api(url, 'GET', `/session/${sessionId}/status`)).body.pendingPromptCount)
    .toBe(0);
  return sessionId;
}

test('DELETE ?purge=true deletes a live session and its history: load answers 404, the file keeps none of its text', async () => {
  const purged = 'purged-prompt-text-4c1d';
  const kept = 'kept-prompt-text-9e2a';
  const dataDir = mkdtempSync(join(scratch, 'purge-'));
  const sluice = await startSluice(['--data-dir', dataDir]);
  let sessionId: string;
  try {
    sessionId = await sessionWithTurn(sluice.url, purged);
    await sessionWithTurn(sluice.url, kept);
    expect((await api(sluice.url, 'DELETE', `/session/${sessionId}?purge=true`)).status).toBe(204);
    const load = await api(sluice.url, 'POST', `/session/${sessionId}/load`, { body: {} });
    expect(load.status).toBe(404);
    expect(load.body.code).toBe('session_not_found');
    expect((await api(sluice.url, 'DELETE', `/session/${sessionId}?purge=true`)).status).toBe(404);
    expect((await api(sluice.url, 'DELETE', `/session/${sessionId}?purge=yes`)).body.code).toBe(
      'invalid_purge',
    );
  } finally {
    expect(await sluice.stop()).toBe(0);
  }
  const file = join(dataDir, 'journal.db');
  const db = new Database(file, { readonly: true });
  try {
    const rows = (sql: string): unknown[] => db.prepare(sql).pluck().all(sessionId!);
    expect(rows('SELECT session_id FROM sluice_sessions WHERE session_id = ?')).toEqual([]);
    expect(rows('SELECT content FROM sluice_session_messages WHERE session_id = ?')).toEqual([]);
    expect(rows('SELECT prompt_id FROM sluice_session_accepted_prompts WHERE session_id = ?')).toEqual([]);
    expect(rows('SELECT body FROM journal_records WHERE session_id = ?')).toEqual([]);
    // The other session is untouched, in the store and in the journal.
    expect(
      db
        .prepare('SELECT count(*) FROM sluice_session_messages WHERE content LIKE ?')
        .pluck()
        .get(`%${kept}%`),
    ).toBeGreaterThan(0);
    expect(
      db.prepare('SELECT count(*) FROM journal_records WHERE body LIKE ?').pluck().get(`%${kept}%`),
    ).toBeGreaterThan(0);
  } finally {
    db.close();
  }
  // secure_delete overwrote the deleted rows: the text is not left in the file's free pages.
  const bytes = readFileSync(file);
  expect(bytes.includes(purged)).toBe(false);
  expect(bytes.includes(kept)).toBe(true);
});

test('--session-idle-timeout-ms closes a session nobody uses; it stays stored and loads again', async () => {
  const sluice = await startSluice(['--session-idle-timeout-ms', '200']);
  try {
    const sessionId = (await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread' } })).body
      .sessionId as string;
    await expect
      .poll(async () => (await api(sluice.url, 'GET', `/session/${sessionId}/status`)).status, {
        timeout: 10_000,
      })
      .toBe(404);
    const load = await api(sluice.url, 'POST', `/session/${sessionId}/load`, { body: {} });
    expect(load.status).toBe(200);
    expect(load.body.sessionId).toBe(sessionId);
  } finally {
    expect(await sluice.stop()).toBe(0);
  }
});

test('--journal-retention-days deletes the calls that ended before it at start-up and keeps the newer ones', async () => {
  const dataDir = mkdtempSync(join(scratch, 'retention-'));
  const now = Date.now();
  const journal = new SqliteJournal({ path: join(dataDir, 'journal.db'), reconcileInterrupted: true });
  for (const [callId, daysAgo] of [
    ['old-1', 45],
    ['old-2', 31],
    ['recent', 2],
  ] as const)
    for (const record of callRecords(callId, now - daysAgo * 86_400_000)) await journal.append(record);
  await journal.close();

  const sluice = await startSluice(['--data-dir', dataDir, '--journal-retention-days', '30'], {
    SLUICE_LOG_LEVEL: 'info',
  });
  try {
    const line = await waitForLogLine(sluice.stderr, (l) => l['msg'] === 'journal pruned');
    expect(line['deletedCalls']).toBe(2);
  } finally {
    expect(await sluice.stop()).toBe(0);
  }
  const db = new Database(join(dataDir, 'journal.db'), { readonly: true });
  try {
    expect(db.prepare('SELECT DISTINCT call_id FROM journal_records').pluck().all()).toEqual(['recent']);
  } finally {
    db.close();
  }
});

/** A settled call: its request at `at`, its result a second later. */
function callRecords(callId: string, at: number): JournalRecord[] {
  const correlation = { callId, taskId: `tmp-${callId}` };
  return [
    {
      version: 1,
      type: 'model_request',
      ...correlation,
      at: new Date(at).toISOString(),
      request: { messages: [{ role: 'user', content: `prompt of ${callId}` }] },
      options: { timeoutMs: 10_000, provider: 'echo', model: 'echo', kind: 'stream' },
    },
    {
      version: 1,
      type: 'model_result',
      ...correlation,
      at: new Date(at + 1_000).toISOString(),
      outcome: 'success',
      text: `answer of ${callId}`,
      durationMs: 1_000,
    },
  ];
}
