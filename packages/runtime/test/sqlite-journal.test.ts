import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { JournalRecord, ModelRequestRecord, ModelResultRecord } from '../src/journal/records.js';
import { JournalClosedError, JournalWriteError } from '../src/journal/journal-errors.js';
import { SqliteJournal } from '../src/journal/sqlite-journal.js';
import type { SqliteJournalOptions } from '../src/journal/sqlite-journal-options.js';
import { JOURNAL_MIGRATIONS, JOURNAL_SCHEMA_VERSION, migrateJournal } from '../src/journal/sqlite-schema.js';

let dir: string;
let file: string;
const opened: SqliteJournal[] = [];

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-journal-'));
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

function request(
  callId: string,
  correlation: { taskId?: string; sessionId?: string } = {},
): ModelRequestRecord {
  return {
    version: 1,
    type: 'model_request',
    callId,
    taskId: correlation.taskId ?? 'task-1',
    sessionId: correlation.sessionId,
    at: '2025-01-01T00:00:00.000Z',
    request: { messages: [{ role: 'user', content: `prompt of ${callId}` }] },
    options: { timeoutMs: 10_000, provider: 'echo', model: 'echo-1', kind: 'complete' },
  };
}

function result(callId: string): ModelResultRecord {
  return {
    version: 1,
    type: 'model_result',
    callId,
    taskId: 'task-1',
    at: '2025-01-01T00:00:01.000Z',
    outcome: 'success',
    stopReason: 'end_turn',
    usage: { inputTokens: 3, outputTokens: 5 },
    text: 'hello',
    durationMs: 12,
  };
}

/** How an append ended: 'confirmed', or its error. */
function outcome(append: Promise<void>): Promise<unknown> {
  return append.then(
    () => 'confirmed',
    (error: unknown) => error,
  );
}

function withoutUndefined(record: JournalRecord): unknown {
  return JSON.parse(JSON.stringify(record));
}

function userVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

describe('SqliteJournal', () => {
  test('an append resolves only after its record is committed and readable', async () => {
    const journal = open();
    const record = request('call-1', { sessionId: 'session-1' });
    const appended = journal.append(record).then(() => journal.recordsForCall('call-1'));
    expect(journal.count()).toBe(0);
    expect(await appended).toEqual([withoutUndefined(record)]);
  });

  test('many concurrent appends are committed in few transactions (group commit)', async () => {
    const journal = open();
    await Promise.all(Array.from({ length: 1000 }, (_, i) => journal.append(request(`call-${i}`))));
    expect(journal.stats()).toMatchObject({
      batchesCommitted: 1,
      recordsCommitted: 1000,
      recordsOutstanding: 0,
    });
    expect(journal.count()).toBe(1000);
  });

  test('a batch holds at most maxBatchRecords and full batches commit in append order', async () => {
    const journal = open({ maxBatchRecords: 10 });
    const ids = Array.from({ length: 95 }, (_, i) => `call-${i}`);
    await Promise.all(ids.map((id) => journal.append(request(id))));
    expect(journal.stats()).toMatchObject({ batchesCommitted: 10, recordsCommitted: 95 });
    expect(journal.recordsForTask('task-1').map((record) => record.callId)).toEqual(ids);
  });

  test('appends made while a batch commits join the next batch', async () => {
    const journal = open();
    const first = journal.append(request('call-0'));
    await new Promise((resolve) => setImmediate(resolve));
    // The first batch is now with the writer; these accumulate behind it.
    const rest = Array.from({ length: 50 }, (_, i) => journal.append(request(`call-${i + 1}`)));
    await Promise.all([first, ...rest]);
    expect(journal.stats()).toMatchObject({ batchesCommitted: 2, recordsCommitted: 51 });
  });

  test('records are read back by call, task and session in commit order', async () => {
    const journal = open();
    await Promise.all([
      journal.append(request('call-a', { taskId: 'task-x', sessionId: 'session-1' })),
      journal.append(request('call-b', { taskId: 'task-y', sessionId: 'session-1' })),
      journal.append(result('call-a')),
    ]);
    expect(journal.recordsForCall('call-a').map((record) => record.type)).toEqual([
      'model_request',
      'model_result',
    ]);
    expect(journal.recordsForTask('task-y').map((record) => record.callId)).toEqual(['call-b']);
    expect(journal.recordsForSession('session-1').map((record) => record.callId)).toEqual([
      'call-a',
      'call-b',
    ]);
    expect(journal.recordsForCall('missing')).toEqual([]);
  });

  test('text in any script, emoji and escapes is stored as the same text, found by its ids', async () => {
    const journal = open();
    const text = 'Änderung fertig — 改动完成 😀 "quoted" \\ \u0007 end';
    const many = Array.from({ length: 70 }, (_, i) => request(`call-${i}`, { sessionId: 'sitzung-ä' }));
    many[3]!.request.messages[0]!.content = text;
    await Promise.all(many.map((record) => journal.append(record)));
    const stored = journal.recordsForSession('sitzung-ä');
    expect(stored).toHaveLength(70);
    expect((stored[3] as ModelRequestRecord).request.messages[0]!.content).toBe(text);
    const db = new Database(file, { readonly: true });
    try {
      const row = db
        .prepare(
          "SELECT typeof(body) AS kind, json_valid(body) AS valid FROM journal_records WHERE call_id = 'call-3'",
        )
        .get();
      expect(row).toEqual({ kind: 'text', valid: 1 });
    } finally {
      db.close();
    }
  });

  test('records survive close and reopen (durability + migrations are idempotent)', async () => {
    const first = open({ synchronous: 'FULL' });
    await first.append(request('call-1'));
    await first.append(result('call-1'));
    await first.close();

    const second = open();
    expect(second.recordsForCall('call-1')).toEqual([
      withoutUndefined(request('call-1')),
      withoutUndefined(result('call-1')),
    ]);
    await second.append(request('call-2'));
    expect(second.count()).toBe(3);
  });

  test('close flushes every accepted append before it resolves', async () => {
    const journal = open({ maxBatchRecords: 7 });
    const appends = Array.from({ length: 40 }, (_, i) => journal.append(request(`call-${i}`)));
    await journal.close();
    expect(journal.stats()).toMatchObject({ recordsCommitted: 40, recordsOutstanding: 0 });
    await Promise.all(appends);

    const reopened = open();
    expect(reopened.count()).toBe(40);
  });

  test('appends after close reject and close is idempotent', async () => {
    const journal = open();
    const closing = journal.close();
    expect(journal.close()).toBe(closing);
    await closing;
    await expect(journal.append(request('late'))).rejects.toBeInstanceOf(JournalClosedError);
    await expect(journal.append(request('late'))).rejects.toThrow(`Journal "${file}" is closed`);
    expect(() => journal.count()).toThrow(JournalClosedError);
  });

  test('indexes exist for call, task and session', () => {
    open();
    const db = new Database(file, { readonly: true });
    try {
      const indexed = db
        .prepare<[], { name: string }>("SELECT name FROM pragma_index_list('journal_records')")
        .all()
        .flatMap(({ name }) =>
          db.prepare<[], { name: string }>(`SELECT name FROM pragma_index_info('${name}')`).all(),
        )
        .map(({ name }) => name)
        .sort();
      expect(indexed).toEqual(['call_id', 'session_id', 'task_id']);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      db.close();
    }
  });

  test('a record SQLite refuses is rejected alone; the others of its transaction commit', async () => {
    const journal = open();
    const db = new Database(file);
    db.exec(`CREATE TRIGGER poison BEFORE INSERT ON journal_records WHEN NEW.call_id = 'poison'
             BEGIN SELECT RAISE(ABORT, 'poisoned record'); END`);
    db.close();

    const held = [
      outcome(journal.append(request('a'))),
      outcome(journal.append(request('poison'))),
      outcome(journal.append(request('b'))),
    ];
    const [a, poison, b] = await Promise.all(held);
    expect([a, b]).toEqual(['confirmed', 'confirmed']);
    expect(poison).toBeInstanceOf(JournalWriteError);
    expect(poison).toMatchObject({ code: 'journal_write_failed', sqliteCode: 'SQLITE_CONSTRAINT_TRIGGER' });
    expect((poison as Error).message).toContain(file);
    expect((poison as Error).message).toContain('poisoned record');

    await journal.append(request('c'));
    expect(journal.recordsForCall('poison')).toEqual([]);
    expect(journal.count()).toBe(3);
    expect(journal.stats()).toMatchObject({ batchesFailed: 0, recordsFailed: 1, recordsCommitted: 3 });
  });

  test('the refused record is the one told, wherever it sits among the confirmations', async () => {
    const journal = open({ confirmSliceRecords: 2 });
    const db = new Database(file);
    db.exec(`CREATE TRIGGER poison BEFORE INSERT ON journal_records WHEN NEW.call_id LIKE 'poison%'
             BEGIN SELECT RAISE(ABORT, 'poisoned record'); END`);
    db.close();
    const ids = ['a', 'b', 'c', 'poison-1', 'd', 'poison-2', 'e'];
    const outcomes = await Promise.all(ids.map((id) => outcome(journal.append(request(id)))));
    expect(outcomes.map((o) => (o === 'confirmed' ? o : 'refused'))).toEqual(
      ids.map((id) => (id.startsWith('poison') ? 'refused' : 'confirmed')),
    );
    expect(journal.count()).toBe(5);
  });

  test('a record nested deeper than SQLite parses JSON is rejected alone, not with its batch', async () => {
    const journal = open();
    let deep: unknown = 'leaf';
    for (let i = 0; i < 1100; i++) deep = { nested: deep };
    const deepRecord = request('deep');
    deepRecord.request.tools = [{ name: 'deep', parameters: deep as Record<string, unknown> }];

    const before = outcome(journal.append(request('neighbour-before')));
    const bad = outcome(journal.append(deepRecord));
    const after = outcome(journal.append(request('neighbour-after')));

    expect(await before).toBe('confirmed');
    expect(await after).toBe('confirmed');
    expect(await bad).toBeInstanceOf(JournalWriteError);
    expect(journal.count()).toBe(2);
  });

  test('a file deleted while open fails its transactions whole: a confirmation would be a lost record', async () => {
    const journal = open();
    await journal.append(request('before')); // the writer thread has the file open
    for (const name of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(name, { force: true });

    const held = await Promise.all([
      outcome(journal.append(request('x'))),
      outcome(journal.append(request('y'))),
    ]);
    for (const error of held) {
      expect(error).toBeInstanceOf(JournalWriteError);
      expect((error as Error).message).toMatch(/deleted/);
    }
    expect(journal.stats()).toMatchObject({ batchesFailed: 1, recordsFailed: 2 });
    await journal.close();
    expect(fs.existsSync(file)).toBe(false);
  });

  test('a file replaced while open is not written through the old one', async () => {
    const journal = open();
    await journal.append(request('before'));
    for (const name of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(name, { force: true });
    fs.writeFileSync(file, ''); // e.g. a restore, or a new empty file at the same path

    const after = await outcome(journal.append(request('after')));
    expect(after).toBeInstanceOf(JournalWriteError);
    expect((after as Error).message).toMatch(/replaced/);
  });

  test('a malformed record is rejected alone and does not fail its batch', async () => {
    const journal = open();
    const notAString = { ...request('bad'), callId: 42 } as unknown as JournalRecord;
    const cyclic = request('cyclic') as ModelRequestRecord & { self?: unknown };
    cyclic.self = cyclic;

    const good = journal.append(request('good'));
    await expect(journal.append(notAString)).rejects.toThrow(
      'journal record callId must be a string, got 42',
    );
    await expect(journal.append(cyclic)).rejects.toThrow(TypeError);
    await good;
    expect(journal.count()).toBe(1);
  });

  test('when the writer thread dies, outstanding and later appends reject', async () => {
    const journal = open();
    await journal.append(request('call-0')); // the writer thread runs and is idle
    const writer = (journal as unknown as { worker: Worker }).worker;
    // call-1 waits for the next turn of the loop to be sent; the writer is told to stop first,
    // so it can never commit it
    const outstanding = journal.append(request('call-1'));
    const terminated = writer.terminate();
    await expect(outstanding).rejects.toThrow(/writer thread exited with code \d+/);
    await terminated;
    await expect(journal.append(request('call-2'))).rejects.toBeInstanceOf(JournalWriteError);
    expect(journal.stats().recordsOutstanding).toBe(0);
    await journal.close();
  });

  test('an idle journal starts no writer thread until its first record; closing it then is clean', async () => {
    const idle = open();
    const writer = (j: SqliteJournal): Worker | undefined => (j as unknown as { worker?: Worker }).worker;
    expect(idle.count()).toBe(0);
    expect(writer(idle)).toBeUndefined();
    await idle.close();
    expect(writer(idle)).toBeUndefined();

    const used = open();
    await used.append(request('call-1'));
    expect(writer(used)).toBeDefined();
    expect(used.count()).toBe(1);
    await used.close();
  });

  test('a listener that throws does not keep the others of its commit from hearing; its error is reported', async () => {
    const reported: unknown[] = [];
    const journal = open({ reportError: (error) => reported.push(error) });
    const heard: Array<string | undefined> = [];
    const listener = (name: string, throws: boolean) => ({
      appended(error?: Error) {
        heard.push(error ? `${name}: ${error.message}` : name);
        if (throws) throw new Error(`listener ${name} is broken`);
      },
    });
    journal.write(request('c1'), listener('first', true));
    journal.write(request('c2'), listener('second', false));
    await journal.append(request('c3'));
    expect(heard).toEqual(['first', 'second']);
    expect(reported).toEqual([new Error('listener first is broken')]);
    expect(journal.stats().recordsOutstanding).toBe(0);
    await journal.close();
    // After close the refusal reaches a throwing listener the same way: write itself never throws.
    expect(() => journal.write(request('c4'), listener('late', true))).not.toThrow();
    expect(heard.at(-1)).toMatch(/^late: /);
    expect(reported).toHaveLength(2);
  });

  test('options are validated with the value in the message', () => {
    expect(() => open({ maxBatchRecords: 0 })).toThrow('maxBatchRecords must be a positive integer, got 0');
    expect(() => open({ maxBatchRecords: 1.5 })).toThrow(
      'maxBatchRecords must be a positive integer, got 1.5',
    );
    expect(() => open({ synchronous: 'OFF' as 'FULL' })).toThrow(
      "synchronous must be 'NORMAL' or 'FULL', got OFF",
    );
    expect(() => open({ busyTimeoutMs: -1 })).toThrow('busyTimeoutMs must be a non-negative integer, got -1');
    expect(() => open({ path: ':memory:' })).toThrow('path must be a database file path, got :memory:');
    expect(() => open({ confirmSliceRecords: 0 })).toThrow(
      'confirmSliceRecords must be a positive integer, got 0',
    );
    expect(() => open({ walAutocheckpointPages: -1 })).toThrow(
      'walAutocheckpointPages must be a non-negative integer, got -1',
    );
    expect(() => open({ walSizeLimitBytes: 1.5 })).toThrow(
      'walSizeLimitBytes must be a non-negative integer, got 1.5',
    );
    expect(() => open({ idleCheckpointMs: -5 })).toThrow(
      'idleCheckpointMs must be a non-negative integer, got -5',
    );
    expect(fs.existsSync(file)).toBe(false);
  });

  test('confirmations of one commit are spread over turns of the event loop', async () => {
    const journal = open({ confirmSliceRecords: 10 });
    let confirmed = 0;
    const appends = Array.from({ length: 95 }, (_, i) =>
      journal.append(request(`call-${i}`)).then(() => confirmed++),
    );
    await appends[0];
    expect(confirmed).toBe(10); // the first slice, and nothing else in this turn
    await new Promise((resolve) => setImmediate(resolve));
    expect(confirmed).toBeLessThan(95);
    await Promise.all(appends);
    expect(journal.stats()).toMatchObject({
      batchesCommitted: 1,
      recordsCommitted: 95,
      recordsOutstanding: 0,
    });
  });

  test('a temporary task is read through its call; a task id shaped like one is still exact', async () => {
    const journal = open();
    await Promise.all([
      journal.append(request('c1', { taskId: 'tmp-c1' })),
      journal.append(request('c2', { taskId: 'tmp-c1' })), // a real task that happens to look temporary
      journal.append(request('c3', { taskId: 'task-z' })),
      journal.append({ ...result('c1'), taskId: 'tmp-c1' }),
    ]);
    expect(journal.recordsForTask('tmp-c1').map((r) => `${r.callId}:${r.type}`)).toEqual([
      'c1:model_request',
      'c2:model_request',
      'c1:model_result',
    ]);
    expect(journal.recordsForTask('task-z').map((r) => r.callId)).toEqual(['c3']);
    expect(journal.recordsForTask('tmp-c3')).toEqual([]);
    expect(journal.recordsForTask('tmp-')).toEqual([]);
  });

  test('the WAL is truncated to walSizeLimitBytes after a checkpoint (bounded disk)', async () => {
    const limit = 128 * 1024;
    const journal = open({ walAutocheckpointPages: 50, walSizeLimitBytes: limit, idleCheckpointMs: 0 });
    const wal = `${file}-wal`;
    // One large transaction grows the WAL well past the limit; its commit checkpoints it.
    await Promise.all(Array.from({ length: 2000 }, (_, i) => journal.append(request(`big-${i}`))));
    expect(fs.statSync(wal).size).toBeGreaterThan(4 * limit);
    // The next transaction restarts the WAL from its beginning and truncates the file.
    await journal.append(request('small'));
    expect(fs.statSync(wal).size).toBeLessThanOrEqual(limit);
    expect(journal.count()).toBe(2001);
  });

  test('an idle journal checkpoints its WAL into the database file', async () => {
    const journal = open({ walAutocheckpointPages: 100_000, idleCheckpointMs: 200 });
    const before = fs.statSync(file).size;
    await Promise.all(Array.from({ length: 500 }, (_, i) => journal.append(request(`call-${i}`))));
    expect(fs.statSync(file).size).toBe(before); // committed to the WAL only
    await expect.poll(() => fs.statSync(file).size, { timeout: 5000 }).toBeGreaterThan(before);
    expect(journal.count()).toBe(500);
  });

  test('the parent directory is created when missing', async () => {
    const nested = path.join(dir, 'a', 'b', 'journal.db');
    const journal = open({ path: nested });
    await journal.append(request('call-1'));
    expect(journal.path).toBe(nested);
    expect(fs.existsSync(nested)).toBe(true);
  });
});

describe('journal schema', () => {
  test('the schema version is recorded and migrations run once', async () => {
    await open().close();
    const db = new Database(file);
    try {
      expect(userVersion(db)).toBe(JOURNAL_SCHEMA_VERSION);
      expect(migrateJournal(db)).toEqual({ from: JOURNAL_SCHEMA_VERSION, to: JOURNAL_SCHEMA_VERSION });

      const next = [
        ...JOURNAL_MIGRATIONS,
        { version: JOURNAL_SCHEMA_VERSION + 1, sql: 'CREATE TABLE extra (x)' },
      ];
      expect(migrateJournal(db, next)).toEqual({
        from: JOURNAL_SCHEMA_VERSION,
        to: JOURNAL_SCHEMA_VERSION + 1,
      });
      // Running it again would fail on CREATE TABLE if the step were not skipped.
      expect(migrateJournal(db, next)).toEqual({
        from: JOURNAL_SCHEMA_VERSION + 1,
        to: JOURNAL_SCHEMA_VERSION + 1,
      });
    } finally {
      db.close();
    }
  });

  test('opening a current file takes no write lock: a busy writer elsewhere does not stall it', async () => {
    await open().close();
    const other = new Database(file);
    other.exec('BEGIN IMMEDIATE'); // another process in the middle of a write transaction
    try {
      const journal = open({ busyTimeoutMs: 1 });
      expect(journal.count()).toBe(0);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
  });

  test('a failing migration leaves the database as it was', () => {
    const db = new Database(file);
    try {
      const broken = [...JOURNAL_MIGRATIONS, { version: JOURNAL_SCHEMA_VERSION + 1, sql: 'NOT SQL' }];
      expect(() => migrateJournal(db, broken)).toThrow(/syntax error/);
      expect(userVersion(db)).toBe(0);
      expect(
        db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'journal_records'").pluck().get(),
      ).toBe(0);
    } finally {
      db.close();
    }
  });

  test('a database from a newer build is refused', () => {
    const db = new Database(file);
    db.pragma(`user_version = ${JOURNAL_SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => open()).toThrow(`schema version ${JOURNAL_SCHEMA_VERSION + 1}, newer than`);
  });

  test('a version 1 file migrates to version 2 with its records, without AUTOINCREMENT', async () => {
    const v1 = new Database(file);
    v1.pragma('journal_mode = WAL');
    migrateJournal(v1, JOURNAL_MIGRATIONS.slice(0, 1));
    const insert = v1.prepare(
      'INSERT INTO journal_records (version, type, call_id, task_id, session_id, at, body) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    const old = [
      request('old-1', { taskId: 'task-a', sessionId: 'session-1' }),
      request('old-2'),
      result('old-1'),
    ];
    for (const r of old) {
      insert.run(r.version, r.type, r.callId, r.taskId, r.sessionId ?? null, r.at, JSON.stringify(r));
    }
    expect(userVersion(v1)).toBe(1);
    v1.close();

    const journal = open();
    expect(journal.recordsForCall('old-1').map((r) => r.type)).toEqual(['model_request', 'model_result']);
    expect(journal.recordsForTask('task-a').map((r) => r.callId)).toEqual(['old-1']);
    expect(journal.recordsForSession('session-1').map((r) => r.callId)).toEqual(['old-1']);
    await journal.append(request('new-1'));
    expect(journal.recordsForTask('task-1').map((r) => r.callId)).toEqual(['old-2', 'old-1', 'new-1']);

    const db = new Database(file, { readonly: true });
    try {
      expect(userVersion(db)).toBe(JOURNAL_SCHEMA_VERSION);
      const sql = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'journal_records'").pluck().get();
      expect(sql).not.toMatch(/AUTOINCREMENT/i);
      expect(db.prepare('SELECT seq, call_id FROM journal_records ORDER BY seq').all()).toEqual([
        { seq: 1, call_id: 'old-1' },
        { seq: 2, call_id: 'old-2' },
        { seq: 3, call_id: 'old-1' },
        { seq: 4, call_id: 'new-1' },
      ]);
    } finally {
      db.close();
    }
  });

  test('session and task indexes are partial; reads use the indexes', async () => {
    await open().close();
    const db = new Database(file, { readonly: true });
    try {
      const partial = db
        .prepare<[], { name: string; partial: number }>(
          "SELECT name, partial FROM pragma_index_list('journal_records')",
        )
        .all()
        .sort((a, b) => a.name.localeCompare(b.name));
      expect(partial).toEqual([
        { name: 'journal_records_call_id', partial: 0 },
        { name: 'journal_records_session_id', partial: 1 },
        { name: 'journal_records_task_id', partial: 1 },
      ]);
      const plan = (sql: string, ...args: string[]): string =>
        db
          .prepare<string[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
          .all(...args)
          .map((row) => row.detail)
          .join('; ');
      expect(plan('SELECT body FROM journal_records WHERE session_id = ? ORDER BY seq', 's')).toContain(
        'USING INDEX journal_records_session_id',
      );
      const byTask = plan(
        `SELECT body FROM (
           SELECT seq, body FROM journal_records WHERE task_id = ? AND task_id <> 'tmp-' || call_id
           UNION ALL
           SELECT seq, body FROM journal_records WHERE call_id = ? AND task_id = 'tmp-' || call_id
         ) ORDER BY seq`,
        't',
        'c',
      );
      expect(byTask).toContain('USING INDEX journal_records_task_id');
      expect(byTask).toContain('USING INDEX journal_records_call_id');
      expect(byTask).not.toMatch(/SCAN journal_records/);
    } finally {
      db.close();
    }
  });

  test('migration versions must increase', () => {
    const db = new Database(file);
    try {
      expect(() => migrateJournal(db, [...JOURNAL_MIGRATIONS, ...JOURNAL_MIGRATIONS])).toThrow(
        `migration versions must be increasing positive integers, got 1 after ${JOURNAL_SCHEMA_VERSION}`,
      );
    } finally {
      db.close();
    }
  });
});
