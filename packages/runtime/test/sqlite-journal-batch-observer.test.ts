import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { SqliteJournal } from '../src/index.js';
import type { ModelRequestRecord } from '../src/journal/records.js';

// `onBatchCommitted`: what metrics learn of the group commit — every committed transaction, its
// records and its latency — without the journal keeping any of it.

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-batch-observer-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function request(callId: string): ModelRequestRecord {
  return {
    version: 1,
    type: 'model_request',
    callId,
    taskId: 'task-1',
    at: '2026-01-01T00:00:00.000Z',
    request: { messages: [{ role: 'user', content: 'hello' }] },
    options: { timeoutMs: 10_000, provider: 'echo', model: 'echo-1', kind: 'complete' },
  };
}

test('onBatchCommitted hears each committed transaction: its records add up to the records committed', async () => {
  const batches: Array<[number, number]> = [];
  const journal = new SqliteJournal({
    path: path.join(dir, 'journal.db'),
    maxBatchRecords: 8,
    onBatchCommitted: (records, ms) => batches.push([records, ms]),
  });
  await Promise.all(Array.from({ length: 30 }, (_, i) => journal.append(request(`call-${i}`))));
  await journal.append(request('call-last'));
  await journal.close();
  expect(batches.reduce((sum, [records]) => sum + records, 0)).toBe(31);
  expect(batches.length).toBeGreaterThanOrEqual(5); // at most 8 records a transaction
  for (const [records, ms] of batches) {
    expect(records).toBeLessThanOrEqual(8);
    expect(ms).toBeGreaterThanOrEqual(0);
  }
});

test('a throwing onBatchCommitted is reported and confirms every append all the same', async () => {
  const reported: unknown[] = [];
  const journal = new SqliteJournal({
    path: path.join(dir, 'journal.db'),
    onBatchCommitted: () => {
      throw new Error('observer broke');
    },
    reportError: (error) => reported.push(error),
  });
  await journal.append(request('call-1'));
  await journal.close();
  expect(reported).toHaveLength(1);
  expect(journal.stats().recordsCommitted).toBe(1);
});

test('onBatchCommitted must be a function', () => {
  expect(
    () => new SqliteJournal({ path: path.join(dir, 'journal.db'), onBatchCommitted: 5 as never }),
  ).toThrow('onBatchCommitted must be a function, got 5');
});
