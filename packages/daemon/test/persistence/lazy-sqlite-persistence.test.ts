import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { JournalClosedError, SqliteJournal, type ModelRequestRecord } from '@sluice/runtime';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { LazySqlitePersistence } from '../../src/persistence/lazy-sqlite-persistence.js';
import { SessionStoreClosedError } from '../../src/persistence/errors.js';
import type { SessionRecord } from '../../src/sessions/index.js';

let dir: string;
let file: string;
let persistence: LazySqlitePersistence;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-lazy-'));
  file = path.join(dir, 'journal.db');
  persistence = new LazySqlitePersistence(file, true);
});

afterEach(async () => {
  await persistence.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function modelRequest(callId: string): ModelRequestRecord {
  return {
    version: 1,
    type: 'model_request',
    callId,
    taskId: 'task-1',
    sessionId: 's-1',
    at: '2025-01-01T00:00:00.000Z',
    request: { messages: [{ role: 'user', content: `prompt of ${callId}` }] },
    options: { timeoutMs: 10_000, provider: 'echo', model: 'echo-1', kind: 'complete' },
  };
}

function session(sessionId: string, text: string): SessionRecord {
  return {
    sessionId,
    workspaceCwd: dir,
    cwd: dir,
    scope: 'thread',
    createdAt: 1,
    updatedAt: 2,
    conversation: [{ role: 'user', content: text }],
  };
}

function storedCallIds(): string[] {
  const journal = new SqliteJournal({ path: file });
  try {
    return journal.recordsForSession('s-1').map((record) => record.callId);
  } finally {
    void journal.close();
  }
}

describe('LazySqlitePersistence', () => {
  test('touches no file until the first call, then opens journal and store in one file', async () => {
    expect(persistence.opened).toBe(false);
    expect(fs.existsSync(file)).toBe(false);
    await persistence.store.save(session('a', 'one'));
    expect(persistence.opened).toBe(true);
    expect(fs.existsSync(file)).toBe(true);
    expect((await persistence.store.load('a'))?.conversation).toEqual([{ role: 'user', content: 'one' }]);
    await persistence.journal.append(modelRequest('call-1'));
    expect(storedCallIds()).toEqual(['call-1']);
  });

  test('calls made while the file opens keep their order, before those made after it opened', async () => {
    const first = [1, 2, 3].map((n) => persistence.journal.append(modelRequest(`call-${n}`)));
    const saved = persistence.store.save(session('a', 'first'));
    const resaved = persistence.store.save(session('a', 'second'));
    await Promise.all([...first, saved, resaved]);
    await persistence.journal.append(modelRequest('call-4'));
    expect(storedCallIds()).toEqual(['call-1', 'call-2', 'call-3', 'call-4']);
    expect((await persistence.store.load('a'))?.conversation[0]?.content).toBe('second');
  });

  test('a file that cannot be opened fails every call with the same error', async () => {
    fs.writeFileSync(file, 'not a database, and long enough to say so');
    const append = persistence.journal.append(modelRequest('call-1'));
    const load = persistence.store.load('a');
    const error = await append.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    await expect(load).rejects.toBe(error);
    expect(persistence.opened).toBe(false);
  });

  test('closing before any call creates no file; later calls reject as on a closed journal and store', async () => {
    await persistence.close();
    expect(fs.existsSync(file)).toBe(false);
    await expect(persistence.journal.append(modelRequest('late'))).rejects.toBeInstanceOf(JournalClosedError);
    await expect(persistence.store.load('a')).rejects.toBeInstanceOf(SessionStoreClosedError);
    expect(fs.existsSync(file)).toBe(false);
  });

  test("write (the runtime's form) hears once per record, in order, across the opening; list reads the file", async () => {
    const heard: Array<[string, Error | undefined]> = [];
    const write = (callId: string) =>
      new Promise<void>((resolve) =>
        persistence.journal.write(modelRequest(callId), {
          appended: (error) => {
            heard.push([callId, error]);
            resolve();
          },
        }),
      );
    await Promise.all([write('call-1'), write('call-2')]);
    await write('call-3'); // the file is open now: straight through
    expect(heard).toEqual([
      ['call-1', undefined],
      ['call-2', undefined],
      ['call-3', undefined],
    ]);
    expect(storedCallIds()).toEqual(['call-1', 'call-2', 'call-3']);
    await persistence.store.save(session('a', 'one'));
    expect((await persistence.store.list!(dir)).sessions.map((s) => s.sessionId)).toEqual(['a']);
  });

  test('a file that cannot be opened fails a write through its listener, once', async () => {
    fs.writeFileSync(file, 'not a database, and long enough to say so');
    const heard: unknown[] = [];
    await new Promise<void>((resolve) =>
      persistence.journal.write(modelRequest('call-1'), {
        appended: (error) => {
          heard.push(error);
          resolve();
        },
      }),
    );
    expect(heard).toHaveLength(1);
    expect(heard[0]).toBeInstanceOf(Error);
  });
});
