import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JournalRecord } from '@sluice/runtime';
import { FakeClock } from '@sluice/runtime/testing';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { JOURNAL_RETENTION_INTERVAL_MS, JournalRetention } from '../../src/persistence/journal-retention.js';
import { LazySqlitePersistence } from '../../src/persistence/index.js';

const DAY = 86_400_000;
const START = Date.parse('2026-06-01T00:00:00.000Z');

let dir: string;
let persistence: LazySqlitePersistence;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-retention-'));
  persistence = new LazySqlitePersistence(join(dir, 'journal.db'), true);
  await persistence.recover();
});

afterEach(async () => {
  await persistence.close();
  rmSync(dir, { recursive: true, force: true });
});

function request(callId: string, at: number): JournalRecord {
  return {
    version: 1,
    type: 'model_request',
    callId,
    taskId: `tmp-${callId}`,
    at: new Date(at).toISOString(),
    request: { messages: [{ role: 'user', content: `prompt of ${callId}` }] },
    options: { timeoutMs: 10_000, provider: 'echo', model: 'echo', kind: 'stream' },
  };
}

function result(callId: string, at: number): JournalRecord {
  return {
    version: 1,
    type: 'model_result',
    callId,
    taskId: `tmp-${callId}`,
    at: new Date(at).toISOString(),
    outcome: 'success',
    text: `answer of ${callId}`,
    durationMs: 1,
  };
}

function storedCalls(): Array<[string, string]> {
  const db = new Database(join(dir, 'journal.db'), { readonly: true });
  try {
    return db.prepare('SELECT call_id, type FROM journal_records ORDER BY seq').raw().all() as Array<
      [string, string]
    >;
  } finally {
    db.close();
  }
}

test('a pass at start-up deletes calls ended before the retention, never the request of a call still running', async () => {
  for (const record of [
    request('ended', START - 40 * DAY),
    request('running', START - 40 * DAY),
    result('ended', START - 40 * DAY + 1_000),
    request('recent', START - DAY),
    result('recent', START - DAY + 1_000),
  ])
    await persistence.journal.append(record);
  const clock = new FakeClock(0);
  const errors: unknown[] = [];
  const retention = new JournalRetention({
    days: 30,
    clock,
    wallNow: () => START + clock.now(),
    prune: (cutoff, after, rows) => persistence.pruneJournal(cutoff, after, rows),
    onError: (error) => errors.push(error),
    batchRows: 2,
  });
  retention.start();
  expect(await retention.runPass()).toBe(1);
  expect(storedCalls()).toEqual([
    ['running', 'model_request'],
    ['recent', 'model_request'],
    ['recent', 'model_result'],
  ]);

  // The running call ends now; 31 days later the hourly pass finds it past the retention.
  await persistence.journal.append(result('running', START));
  clock.advance(JOURNAL_RETENTION_INTERVAL_MS);
  expect(await retention.runPass()).toBe(0); // joins the pass the timer started
  clock.advance(31 * DAY);
  await retention.runPass(); // the pass of the first hourly timer on the way, with its cutoff
  expect(await retention.runPass()).toBe(2);
  expect(storedCalls()).toEqual([]);
  await retention.stop();
  expect(clock.pendingTimers).toBe(0);
  expect(errors).toEqual([]);
});

test('retention is off at 0 days, and refuses a fractional or negative number of days', () => {
  const options = { clock: new FakeClock(0), wallNow: Date.now, onError: () => {} };
  const prune = (cutoff: number, after: number, rows: number) =>
    persistence.pruneJournal(cutoff, after, rows);
  expect(JournalRetention.of(0, { ...options, prune })).toBeUndefined();
  for (const days of [-1, 1.5])
    expect(() => new JournalRetention({ ...options, prune, days })).toThrow(
      /journalRetentionDays must be a positive integer/,
    );
});

test('retention keeps the calls of a durable budget: they are its spend (issue 21)', async () => {
  const onBudget = (record: JournalRecord): JournalRecord => ({ ...record, taskId: 'team-q3' });
  for (const record of [
    onBudget(request('budgeted', START - 40 * DAY)),
    onBudget(result('budgeted', START - 40 * DAY + 1_000)),
    request('plain', START - 40 * DAY),
    result('plain', START - 40 * DAY + 1_000),
  ])
    await persistence.journal.append(record);
  const created = await persistence.budgets.insert(
    { budgetId: 'team-q3', limits: { maxCalls: 100 }, createdAt: START - 41 * DAY },
    10,
  );
  expect(created).toBe('created');
  const retention = new JournalRetention({
    days: 30,
    clock: new FakeClock(0),
    wallNow: () => START,
    prune: (cutoff, after, rows) => persistence.pruneJournal(cutoff, after, rows),
    onError: (error) => {
      throw error;
    },
  });
  expect(await retention.runPass()).toBe(1);
  expect(storedCalls()).toEqual([
    ['budgeted', 'model_request'],
    ['budgeted', 'model_result'],
  ]);
  await retention.stop();
});
