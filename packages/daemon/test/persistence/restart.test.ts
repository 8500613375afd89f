import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { JOURNAL_SCHEMA_VERSION, SqliteJournal, type ModelRequestRecord } from '@sluice/runtime';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  SESSION_STORE_SCHEMA_VERSION,
  sessionStoreSchemaVersion,
} from '../../src/persistence/session-store-schema.js';
import {
  SqliteSessionStore,
  type SqliteSessionStoreOptions,
} from '../../src/persistence/sqlite-session-store.js';
import { SESSION_EVENT, type ConversationMessage, type SessionRecord } from '../../src/sessions/index.js';
import { flush, setup, text } from '../sessions/helpers.js';

let dir: string;
let file: string;
let closers: Array<() => unknown>;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-restart-'));
  file = path.join(dir, 'sluice.db');
  closers = [];
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await Promise.resolve(close()).catch(() => {});
  fs.rmSync(dir, { recursive: true, force: true });
});

function openStore(options: Partial<SqliteSessionStoreOptions> = {}): SqliteSessionStore {
  const store = new SqliteSessionStore({ path: file, ...options });
  closers.push(() => store.close());
  return store;
}

function openJournal(): SqliteJournal {
  const journal = new SqliteJournal({ path: file, idleCheckpointMs: 5 });
  closers.push(() => journal.close());
  return journal;
}

function raw(): Database.Database {
  const db = new Database(file);
  closers.push(() => db.close());
  return db;
}

function modelRequest(callId: string, sessionId: string): ModelRequestRecord {
  return {
    version: 1,
    type: 'model_request',
    callId,
    taskId: 'task-1',
    sessionId,
    at: '2025-01-01T00:00:00.000Z',
    request: { messages: [{ role: 'user', content: `prompt of ${callId}` }] },
    options: { timeoutMs: 10_000, provider: 'echo', model: 'echo-1', kind: 'complete' },
  };
}

function record(sessionId: string, conversation: ConversationMessage[]): SessionRecord {
  return {
    sessionId,
    workspaceCwd: '/work',
    cwd: '/work',
    scope: 'thread',
    createdAt: 1_700_000_000_000,
    updatedAt: 1_700_000_000_000,
    conversation,
  };
}

function turns(count: number): ConversationMessage[] {
  const result: ConversationMessage[] = [];
  for (let turn = 0; turn < count; turn++)
    result.push(
      { role: 'user', content: `question ${turn}` },
      { role: 'assistant', content: `answer ${turn}` },
    );
  return result;
}

describe('the session store shares the journal file', () => {
  test('journal and store open on one file, write at the same time, and both read back after reopening', async () => {
    const journal = openJournal();
    const store = openStore();
    const appends: Promise<void>[] = [];
    for (let turn = 1; turn <= 40; turn++) {
      appends.push(journal.append(modelRequest(`call-${turn}`, 's-1')));
      await store.save(record('s-1', turns(turn)));
      if (turn % 10 === 0) await Promise.all(appends);
    }
    await Promise.all(appends);
    await store.close();
    await journal.close();

    const reopenedJournal = openJournal();
    const reopenedStore = openStore();
    expect(reopenedJournal.recordsForSession('s-1').map((entry) => entry.callId)).toEqual(
      Array.from({ length: 40 }, (_, index) => `call-${index + 1}`),
    );
    expect((await reopenedStore.load('s-1'))?.conversation).toEqual(turns(40));
    const db = raw();
    expect(db.pragma('user_version', { simple: true })).toBe(JOURNAL_SCHEMA_VERSION);
    expect(sessionStoreSchemaVersion(db)).toBe(SESSION_STORE_SCHEMA_VERSION);
  });

  test('the store may create the file before the journal migrates it', async () => {
    const store = openStore();
    await store.save(record('s-1', turns(2)));
    const journal = openJournal();
    await journal.append(modelRequest('call-1', 's-1'));
    expect(journal.recordsForSession('s-1')).toHaveLength(1);
    expect((await store.load('s-1'))?.conversation).toEqual(turns(2));
    expect(raw().pragma('user_version', { simple: true })).toBe(JOURNAL_SCHEMA_VERSION);
  });

  test('a save waits for a lock held elsewhere up to busyTimeoutMs, then fails and changes nothing', async () => {
    const store = openStore({ busyTimeoutMs: 20 });
    await store.save(record('s-1', turns(1)));
    const other = raw();
    other.exec('BEGIN IMMEDIATE');
    await expect(store.save(record('s-1', turns(2)))).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    other.exec('COMMIT');
    expect((await store.load('s-1'))?.conversation).toEqual(turns(1));
    await store.save(record('s-1', turns(2)));
    expect((await store.load('s-1'))?.conversation).toEqual(turns(2));
  });
});

describe('PROTOCOL §4 load/resume after a restart', () => {
  test('a session, its turns and a branch survive a daemon restart and resume with their history', async () => {
    const first = setup({ store: openStore() });
    const sid = first.bridge.createSession({ cwd: '/work', scope: 'thread' }).sessionId;
    const admission = first.bridge.sendPrompt(sid, text('hello'));
    await flush();
    first.agent.current(sid).succeed('hi there');
    await admission.done;
    const branch = await first.bridge.branchSession(sid, { name: 'side' });
    await flush();
    await first.bridge.shutdown();
    await flush();

    // A new process: a new store on the same file, a new bridge.
    const second = setup({ store: openStore() });
    const resumed = await second.bridge.restoreSession(sid, { mode: 'resume' });
    expect(resumed.sessionId).toBe(sid);
    expect(second.bridge.conversation(sid)).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'hi there' },
    ]);
    await second.bridge.restoreSession(branch.sessionId, { mode: 'load' });
    expect(second.bridge.status(branch.sessionId)).toMatchObject({
      displayName: 'side',
      forkedFrom: { sessionId: sid },
    });
    expect(
      second.sink.ofType(SESSION_EVENT.sessionUpdate, branch.sessionId).map((event) => event.data['update']),
    ).toEqual([
      { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'hello' } },
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hi there' } },
    ]);
  });

  test('the next turn after a restart appends to the stored history', async () => {
    const first = setup({ store: openStore() });
    const sid = first.bridge.createSession({ cwd: '/work', scope: 'thread' }).sessionId;
    const one = first.bridge.sendPrompt(sid, text('one'));
    await flush();
    first.agent.current(sid).succeed('1');
    await one.done;
    await first.bridge.shutdown();
    await flush();

    const store = openStore();
    const second = setup({ store });
    await second.bridge.restoreSession(sid);
    const two = second.bridge.sendPrompt(sid, text('two'));
    await flush();
    second.agent.current(sid).succeed('2');
    await two.done;
    await flush();
    expect((await store.load(sid))?.conversation).toEqual([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: '1' },
      { role: 'user', content: 'two' },
      { role: 'assistant', content: '2' },
    ]);
  });

  test('restoring a session the store does not have is session_not_found', async () => {
    const { bridge } = setup({ store: openStore() });
    await expect(bridge.restoreSession('no-such-session')).rejects.toMatchObject({
      code: 'session_not_found',
    });
  });
});
