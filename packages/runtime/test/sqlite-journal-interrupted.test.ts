import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { SqliteJournal, type SqliteJournalOptions } from '../src/index.js';
import type { ModelRequestRecord, ModelResultRecord } from '../src/journal/records.js';

// Issue 19 item 7 (SCH-15): a killed daemon leaves `model_request` records without a result. The
// next daemon to open the file gives each one result with error code `interrupted` — once, and
// without running the call again.

let dir: string;
let file: string;
const opened: SqliteJournal[] = [];

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-interrupted-'));
  file = path.join(dir, 'journal.db');
});
afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((journal) => journal.close()));
  fs.rmSync(dir, { recursive: true, force: true });
});

function open(options: Partial<SqliteJournalOptions> = {}): SqliteJournal {
  const journal = new SqliteJournal({ path: file, ...options });
  opened.push(journal);
  return journal;
}

function request(callId: string, sessionId?: string, turnId?: string): ModelRequestRecord {
  return {
    version: 1,
    type: 'model_request',
    callId,
    taskId: 'task-1',
    sessionId,
    turnId,
    at: '2026-01-01T00:00:00.000Z',
    request: { messages: [{ role: 'user', content: 'hello' }] },
    options: { timeoutMs: 10_000, provider: 'echo', model: 'echo-1', kind: 'stream' },
  };
}

function result(callId: string): ModelResultRecord {
  return {
    version: 1,
    type: 'model_result',
    callId,
    taskId: 'task-1',
    at: '2026-01-01T00:00:01.000Z',
    outcome: 'success',
    stopReason: 'end_turn',
    usage: { inputTokens: 1, outputTokens: 1 },
    text: 'hi',
    durationMs: 1000,
  };
}

/** A file as a killed daemon leaves it: three calls recorded, one of them finished. */
async function leaveOrphans(): Promise<void> {
  const killed = open();
  await killed.append(request('done-1', 's1', 'p1'));
  await killed.append(request('open-1', 's1', 'p2'));
  await killed.append(result('done-1'));
  await killed.append(request('open-2'));
  await killed.close(); // a journal that does not reconcile leaves the file as it found it
}

describe('start-up reconciliation of interrupted calls', () => {
  test('each request without a result gets one `interrupted` result, keeping its session and prompt', async () => {
    await leaveOrphans();
    const journal = open({ reconcileInterrupted: true });
    expect(journal.interruptedAtOpen).toBe(2);

    const [, marked] = journal.recordsForCall('open-1');
    expect(marked).toMatchObject({
      type: 'model_result',
      outcome: 'error',
      sessionId: 's1',
      turnId: 'p2',
      error: { code: 'interrupted', message: expect.stringMatching(/not re-run/) },
    });
    expect(journal.recordsForCall('open-2')[1]).toMatchObject({ error: { code: 'interrupted' } });
    expect(journal.recordsForCall('done-1').map((r) => r.type)).toEqual(['model_request', 'model_result']);
  });

  test('a call is marked once: the next start-up finds nothing left', async () => {
    await leaveOrphans();
    await open({ reconcileInterrupted: true }).close();
    const again = open({ reconcileInterrupted: true });
    expect(again.interruptedAtOpen).toBe(0);
    expect(again.recordsForCall('open-1')).toHaveLength(2);
  });

  test('a journal that closes with every call finished marks the file settled', async () => {
    const journal = open({ reconcileInterrupted: true });
    await journal.append(request('c1'));
    await journal.append(result('c1'));
    await journal.close();
    const db = new Database(file, { readonly: true });
    try {
      const settled = db
        .prepare("SELECT value FROM journal_meta WHERE key = 'settled_through'")
        .pluck()
        .get();
      expect(settled).toBe(db.prepare('SELECT max(seq) FROM journal_records').pluck().get());
    } finally {
      db.close();
    }
  });

  test('without the option (a reader, a second process) opening changes nothing', async () => {
    await leaveOrphans();
    const reader = open();
    expect(reader.interruptedAtOpen).toBe(0);
    expect(reader.count()).toBe(4);
  });
});
