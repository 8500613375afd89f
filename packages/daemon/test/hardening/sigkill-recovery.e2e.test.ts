import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { api, openEvents, textPrompt } from '../helpers/http-client.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';
import { until } from '../helpers/until.js';

// Issue 19 items 7, 8 and 9: a daemon killed with SIGKILL while prompts run and wait. The next
// daemon on the same data directory gives every model call left open an `interrupted` result
// (never running it again, SCH-15), ends every prompt that was answered 202 and never ended
// with exactly one `turn_error daemon_restarted` when its session is loaded, and keeps every
// turn that had completed.

const ECHO_DELAY_MS = 1500;
const SESSIONS = 3;
const OUTSTANDING = 3; // per session: one running, two queued

let dataDir: string;
let workspace: string;
let first: SluiceProcess | undefined;
let second: SluiceProcess | undefined;
const sessionIds: string[] = [];
/** Per session: the prompts answered 202 that had not ended when the daemon was killed. */
const unfinished = new Map<string, string[]>();
const completed = new Map<string, string>();

const serveArgs = (): string[] => [
  '--data-dir',
  dataDir,
  '--workspace',
  workspace,
  '--echo-delay-ms',
  String(ECHO_DELAY_MS),
];

beforeAll(async () => {
  dataDir = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-kill-data-')));
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-kill-ws-')));
  first = await startSluice(serveArgs());
  const url = first.url;
  for (let i = 0; i < SESSIONS; i++) {
    const { body } = await api(url, 'POST', '/session', { body: { sessionScope: 'thread' } });
    sessionIds.push(body.sessionId);
  }
  // One turn per session completes before the kill.
  await Promise.all(
    sessionIds.map(async (sessionId) => {
      const events = await openEvents(url, sessionId);
      const accepted = await api(url, 'POST', `/session/${sessionId}/prompt`, {
        body: textPrompt(`first ${sessionId}`),
      });
      completed.set(sessionId, accepted.body.promptId);
      await events.waitFor(
        (f) => f.event === 'turn_complete' && f.data.promptId === accepted.body.promptId,
        10_000,
      );
      events.close();
    }),
  );
  // Then the load the daemon dies under: three outstanding prompts per session.
  for (const sessionId of sessionIds) {
    const ids: string[] = [];
    for (let n = 0; n < OUTSTANDING; n++) {
      const accepted = await api(url, 'POST', `/session/${sessionId}/prompt`, {
        body: textPrompt(`later ${n}`),
      });
      expect(accepted.status).toBe(202);
      ids.push(accepted.body.promptId);
    }
    unfinished.set(sessionId, ids);
  }
  // Kill while each session's first outstanding prompt has its model call executing.
  await until(
    async () => ((await api(url, 'GET', '/runtime/snapshot')).body.jobs?.length ?? 0) >= SESSIONS,
    "every session's call runs",
  );
  await first.stop('SIGKILL');
  second = await startSluice(serveArgs(), { SLUICE_LOG_LEVEL: 'info' });
}, 60_000);

afterAll(async () => {
  await Promise.all([first?.stop('SIGKILL'), second?.stop()]);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

describe('after kill -9 under load', () => {
  test('every model call left open gets one `interrupted` result, counted in the start-up log', async () => {
    const line = await expect
      .poll(
        () =>
          second!
            .stderr()
            .split('\n')
            .find((l) => l.includes('journal recovered')),
        { timeout: 10_000 },
      )
      .toBeDefined()
      .then(() =>
        second!
          .stderr()
          .split('\n')
          .find((l) => l.includes('journal recovered'))!,
      );
    const logged = JSON.parse(line) as { interruptedCalls: number };
    expect(logged.interruptedCalls).toBe(SESSIONS);

    const db = new Database(join(dataDir, 'journal.db'), { readonly: true });
    try {
      const open = db
        .prepare(
          `SELECT count(*) FROM journal_records r WHERE r.type = 'model_request' AND NOT EXISTS
             (SELECT 1 FROM journal_records x WHERE x.call_id = r.call_id AND x.type = 'model_result')`,
        )
        .pluck()
        .get();
      expect(open).toBe(0);
      const interrupted = db
        .prepare(`SELECT body FROM journal_records WHERE json_extract(body, '$.error.code') = 'interrupted'`)
        .pluck()
        .all() as string[];
      expect(interrupted).toHaveLength(SESSIONS);
      // The interrupted calls were the running prompts'; none was sent to the model again.
      const running = new Set(sessionIds.map((id) => unfinished.get(id)![0]));
      for (const body of interrupted) expect(running.has(JSON.parse(body).turnId)).toBe(true);
      for (const promptId of running) {
        const requests = db
          .prepare(
            `SELECT count(*) FROM journal_records WHERE type = 'model_request' AND json_extract(body, '$.turnId') = ?`,
          )
          .pluck()
          .get(promptId);
        expect(requests).toBe(1);
      }
    } finally {
      db.close();
    }
  });

  test('each prompt answered 202 and never ended gets exactly one `daemon_restarted` on load; completed turns survive', async () => {
    for (const sessionId of sessionIds) {
      const loaded = await api(second!.url, 'POST', `/session/${sessionId}/load`, { body: {} });
      expect(loaded.status).toBe(200);
      const events = await openEvents(second!.url, sessionId, { headers: { 'Last-Event-ID': '0' } });
      await events.waitFor((f) => f.event === 'replay_complete');
      events.close();
      const restarted = events.frames
        .filter((f) => f.event === 'turn_error')
        .map((f) => ({ promptId: f.data.data.promptId as string, code: f.data.data.code as string }));
      expect(restarted).toEqual(
        unfinished.get(sessionId)!.map((promptId) => ({ promptId, code: 'daemon_restarted' })),
      );
      // The completed turn is in the replayed history, and no prompt ran again.
      expect(events.raw()).toContain(`first ${sessionId}`);
      expect(events.frames.some((f) => f.event === 'turn_complete')).toBe(false);
    }
    // A second load finds nothing left to end.
    const again = await api(second!.url, 'POST', `/session/${sessionIds[0]}/load`, { body: {} });
    expect(again.status).toBe(200);
  });
});
