import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, test } from 'vitest';
import type { JournalRecord } from '../src/journal/records.js';
import { SqliteJournal } from '../src/journal/sqlite-journal.js';
import { SqliteJournalPruner } from '../src/journal/sqlite-journal-pruner.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-06-01T00:00:00.000Z');

let dir: string;
let file: string;
let db: Database.Database | undefined;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-pruner-'));
  file = path.join(dir, 'journal.db');
});

afterEach(() => {
  db?.close();
  db = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A call's records: its request at `at`, and its result a second later unless it is still running. */
function call(
  callId: string,
  at: number,
  options: { sessionId?: string; running?: boolean } = {},
): JournalRecord[] {
  const correlation = {
    callId,
    taskId: `tmp-${callId}`,
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
  };
  const records: JournalRecord[] = [
    {
      version: 1,
      type: 'model_request',
      ...correlation,
      at: new Date(at).toISOString(),
      request: { messages: [{ role: 'user', content: `prompt of ${callId}` }] },
      options: { timeoutMs: 10_000, provider: 'echo', model: 'echo-1', kind: 'complete' },
    },
  ];
  if (!options.running)
    records.push({
      version: 1,
      type: 'model_result',
      ...correlation,
      at: new Date(at + 1_000).toISOString(),
      outcome: 'success',
      text: `answer of ${callId}`,
      durationMs: 1_000,
    });
  return records;
}

/** Writes the records through a real journal, in order, and opens a pruning connection to the file. */
async function journalOf(records: JournalRecord[]): Promise<SqliteJournalPruner> {
  // As the daemon opens it: the one writer of the file, which keeps the settled mark.
  const journal = new SqliteJournal({ path: file, reconcileInterrupted: true });
  for (const record of records) await journal.append(record);
  await journal.close();
  db = new Database(file);
  return new SqliteJournalPruner(db);
}

function callIds(): string[] {
  return [
    ...new Set(db!.prepare('SELECT call_id FROM journal_records ORDER BY seq').pluck().all() as string[]),
  ];
}

test('calls whose result is older than the cutoff are deleted, request and result, and newer ones stay', async () => {
  const pruner = await journalOf([
    ...call('old-1', NOW - 40 * DAY),
    ...call('old-2', NOW - 31 * DAY),
    ...call('new', NOW - DAY),
  ]);
  const batch = pruner.pruneBatch(NOW - 30 * DAY, 0, 1_000);
  expect(batch).toMatchObject({ deletedCalls: 2, done: true });
  expect(callIds()).toEqual(['new']);
  expect(db!.prepare('SELECT count(*) FROM journal_records').pluck().get()).toBe(2);
});

test('SCH-9 the request of a call still running is never deleted, however old', async () => {
  const pruner = await journalOf([
    ...call('running', NOW - 90 * DAY, { running: true }),
    ...call('old', NOW - 60 * DAY),
  ]);
  expect(pruner.pruneBatch(NOW - 30 * DAY, 0, 1_000).deletedCalls).toBe(1);
  expect(callIds()).toEqual(['running']);
  expect(db!.prepare("SELECT type FROM journal_records WHERE call_id = 'running'").pluck().all()).toEqual([
    'model_request',
  ]);
});

test('a long journal is pruned in batches of a bounded number of records, each continuing after the last', async () => {
  const records: JournalRecord[] = [];
  for (let index = 0; index < 50; index++) records.push(...call(`c${index}`, NOW - (100 - index) * DAY));
  const pruner = await journalOf(records);
  let afterSeq = 0;
  let batches = 0;
  let deleted = 0;
  for (;;) {
    const batch = pruner.pruneBatch(NOW - 60 * DAY, afterSeq, 8);
    expect(batch.scanned).toBeLessThanOrEqual(8);
    batches++;
    deleted += batch.deletedCalls;
    afterSeq = batch.lastSeq;
    if (batch.done) break;
  }
  // Calls c0..c39 ended before the cutoff (100..61 days ago); c40..c49 did not.
  expect(deleted).toBe(40);
  expect(batches).toBe(11);
  expect(callIds()).toEqual(Array.from({ length: 10 }, (_, index) => `c${40 + index}`));
});

test('a purge deletes the settled calls of one session only, and keeps the settled mark at or below the last record', async () => {
  const pruner = await journalOf([
    ...call('other', NOW, { sessionId: 's-2' }),
    ...call('mine-1', NOW, { sessionId: 's-1' }),
    ...call('mine-2', NOW, { sessionId: 's-1' }),
  ]);
  // The journal closed with no call open: every record is settled.
  const settled = () =>
    db!.prepare("SELECT value FROM journal_meta WHERE key = 'settled_through'").pluck().get();
  expect(settled()).toBe(6);
  expect(pruner.deleteSessionRecords('s-1')).toBe(4);
  expect(callIds()).toEqual(['other']);
  expect(settled()).toBe(2);
});
