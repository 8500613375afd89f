import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  InvalidCursorError,
  SessionStoreClosedError,
  SessionStoreSchemaTooNewError,
} from '../../src/persistence/index.js';
import {
  SESSION_STORE_COMPONENT,
  SESSION_STORE_MIGRATIONS,
  SESSION_STORE_SCHEMA_VERSION,
  migrateSessionStore,
  sessionStoreSchemaVersion,
} from '../../src/persistence/session-store-schema.js';
import {
  SqliteSessionStore,
  type SqliteSessionStoreOptions,
} from '../../src/persistence/sqlite-session-store.js';
import {
  ConversationLog,
  DEFAULT_MAX_CONVERSATION_BYTES,
  DEFAULT_MAX_CONVERSATION_MESSAGES,
  MemorySessionStore,
  type ConversationMessage,
  type SessionRecord,
} from '../../src/sessions/index.js';

let dir: string;
let file: string;
let closers: Array<() => unknown>;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-sessions-'));
  file = path.join(dir, 'sluice.db');
  closers = [];
});

afterEach(async () => {
  await Promise.allSettled(closers.splice(0).map(async (close) => close()));
  fs.rmSync(dir, { recursive: true, force: true });
});

function open(options: Partial<SqliteSessionStoreOptions> = {}): SqliteSessionStore {
  const store = new SqliteSessionStore({ path: file, ...options });
  closers.push(() => store.close());
  return store;
}

function raw(): Database.Database {
  const db = new Database(file);
  closers.push(() => db.close());
  return db;
}

function messages(prefix: string, count: number, from = 0): ConversationMessage[] {
  return Array.from({ length: count }, (_, index) => ({
    role: (from + index) % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content: `${prefix} ${from + index}`,
  }));
}

function record(
  sessionId: string,
  conversation: ConversationMessage[] = [],
  overrides: Partial<SessionRecord> = {},
): SessionRecord {
  return {
    sessionId,
    workspaceCwd: '/work',
    cwd: '/work/sub',
    scope: 'thread',
    createdAt: 1_700_000_000_000,
    updatedAt: 1_700_000_000_000,
    conversation,
    ...overrides,
  };
}

function messageRows(db: Database.Database, sessionId: string): Array<{ rowid: number; seq: number }> {
  return db
    .prepare<[string], { rowid: number; seq: number }>(
      'SELECT rowid, seq FROM sluice_session_messages WHERE session_id = ? ORDER BY seq',
    )
    .all(sessionId);
}

describe('SqliteSessionStore round trip', () => {
  test('a saved session loads back with its metadata and conversation', async () => {
    const store = open();
    const saved = record(
      's-1',
      [
        { role: 'user', content: 'list files' },
        { role: 'assistant', content: 'calling ls' },
        { role: 'tool', content: 'a.txt\nb.txt', name: 'ls', toolCallId: 'call-1' },
        { role: 'assistant', content: 'two files — ünïcödé ✓' },
      ],
      {
        scope: 'single',
        createdAt: 1_700_000_000_000,
        updatedAt: 1_700_000_005_000,
        displayName: 'Files (Branch)',
        forkedFrom: { sessionId: 's-0' },
      },
    );
    await store.save(saved);
    expect(await store.load('s-1')).toStrictEqual(saved);
  });

  test('optional fields that were absent stay absent', async () => {
    const store = open();
    await store.save(record('s-1', [{ role: 'user', content: 'hi' }]));
    const loaded = await store.load('s-1');
    expect(loaded).toStrictEqual(record('s-1', [{ role: 'user', content: 'hi' }]));
    expect(loaded && 'displayName' in loaded).toBe(false);
    expect(loaded && 'forkedFrom' in loaded).toBe(false);
    expect(loaded?.conversation[0] && 'name' in loaded.conversation[0]).toBe(false);
  });

  test("a session's model is kept by saves, loads and the listing; a later save may clear it", async () => {
    const store = open();
    await store.save(record('s-1', messages('m', 2), { model: 'coder' }));
    expect(await store.load('s-1')).toStrictEqual(record('s-1', messages('m', 2), { model: 'coder' }));
    expect((await store.list('/work')).sessions[0]).toMatchObject({ sessionId: 's-1', model: 'coder' });
    await store.save(record('s-1', messages('m', 2)));
    expect(await store.load('s-1')).toStrictEqual(record('s-1', messages('m', 2)));
  });

  test('a session stored before sessions had a model loads without one after the migration', async () => {
    const db = raw();
    migrateSessionStore(db, SESSION_STORE_MIGRATIONS.slice(0, 2));
    db.prepare(
      `INSERT INTO sluice_sessions (session_id, workspace_cwd, cwd, scope, created_at, updated_at,
         first_seq, next_seq, revision, saved_order) VALUES ('old', '/work', '/work/sub', 'thread', 1, 2, 0, 0, 1, 1)`,
    ).run();
    const store = open();
    expect(sessionStoreSchemaVersion(db)).toBe(SESSION_STORE_SCHEMA_VERSION);
    const loaded = await store.load('old');
    expect(loaded).toMatchObject({ sessionId: 'old', conversation: [] });
    expect(loaded && 'model' in loaded).toBe(false);
  });

  test('a later save replaces the metadata (updatedAt, displayName)', async () => {
    const store = open();
    await store.save(record('s-1', messages('m', 2), { displayName: 'first' }));
    await store.save(
      record('s-1', messages('m', 4), { updatedAt: 1_700_000_009_000, displayName: 'second' }),
    );
    expect(await store.load('s-1')).toStrictEqual(
      record('s-1', messages('m', 4), { updatedAt: 1_700_000_009_000, displayName: 'second' }),
    );
  });

  test('the loaded record is a copy: changing it changes neither the store nor the next load', async () => {
    const store = open();
    await store.save(record('s-1', messages('m', 2)));
    const first = await store.load('s-1');
    first?.conversation.push({ role: 'user', content: 'injected' });
    if (first?.conversation[0]) first.conversation[0].content = 'changed';
    expect(await store.load('s-1')).toStrictEqual(record('s-1', messages('m', 2)));
  });

  test('changing the saved array after save does not corrupt the next save', async () => {
    const store = open();
    const conversation = messages('m', 2);
    await store.save(record('s-1', conversation));
    conversation.splice(0, 2, { role: 'user', content: 'x' }, { role: 'assistant', content: 'y' });
    await store.save(record('s-1', [...messages('m', 2), ...messages('m', 2, 2)]));
    expect((await store.load('s-1'))?.conversation).toEqual(messages('m', 4));
  });

  test('an unknown session loads as undefined (the interface: "the store has none")', async () => {
    const store = open();
    await store.save(record('s-1'));
    expect(await store.load('missing')).toBeUndefined();
    expect(await store.load('')).toBeUndefined();
  });

  test('a session survives closing and reopening the store (restart)', async () => {
    const first = open();
    const saved = record('s-1', messages('m', 6), { displayName: 'kept' });
    await first.save(saved);
    await first.close();
    const second = open();
    expect(await second.load('s-1')).toStrictEqual(saved);
  });
});

describe('SqliteSessionStore writes only what changed', () => {
  test('a turn appends its messages as rows; the stored rows are not rewritten', async () => {
    const store = open();
    const db = raw();
    await store.save(record('s-1', messages('m', 4)));
    const before = messageRows(db, 's-1');
    await store.save(record('s-1', messages('m', 6)));
    const after = messageRows(db, 's-1');
    expect(after.slice(0, 4)).toEqual(before);
    expect(after.map((row) => row.seq)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  test('after a restart the first save also appends only (the stored rows are read back once)', async () => {
    const first = open();
    await first.save(record('s-1', messages('m', 4)));
    await first.close();
    const db = raw();
    const before = messageRows(db, 's-1');
    const second = open();
    await second.save(record('s-1', messages('m', 6)));
    expect(messageRows(db, 's-1').slice(0, 4)).toEqual(before);
    expect(messageRows(db, 's-1')).toHaveLength(6);
  });

  test('a save without changes to the conversation writes no message row', async () => {
    const store = open({ maxCacheBytes: 0 });
    const db = raw();
    await store.save(record('s-1', messages('m', 4)));
    const before = messageRows(db, 's-1');
    await store.save(record('s-1', messages('m', 4), { updatedAt: 1_700_000_001_000 }));
    expect(messageRows(db, 's-1')).toEqual(before);
  });

  test('trimmed messages are deleted from the start, the rest stay in place', async () => {
    const store = open();
    const db = raw();
    await store.save(record('s-1', messages('m', 6)));
    const before = messageRows(db, 's-1');
    await store.save(record('s-1', messages('m', 6, 2)));
    const after = messageRows(db, 's-1');
    expect(after.slice(0, 4)).toEqual(before.slice(2));
    expect(after.map((row) => row.seq)).toEqual([2, 3, 4, 5, 6, 7]);
    expect((await store.load('s-1'))?.conversation).toEqual(messages('m', 6, 2));
  });

  test('a conversation that shares nothing with the stored one replaces it', async () => {
    const store = open();
    await store.save(record('s-1', messages('old', 3)));
    await store.save(record('s-1', messages('new', 2)));
    expect((await store.load('s-1'))?.conversation).toEqual(messages('new', 2));
    expect(messageRows(raw(), 's-1')).toHaveLength(2);
  });

  test('repeated identical messages still store exactly the saved conversation', async () => {
    const store = open();
    const same = (count: number): ConversationMessage[] =>
      Array.from({ length: count }, () => ({ role: 'user' as const, content: 'again' }));
    await store.save(record('s-1', same(3)));
    await store.save(record('s-1', [...same(2), { role: 'assistant', content: 'done' }]));
    expect((await store.load('s-1'))?.conversation).toEqual([
      ...same(2),
      { role: 'assistant', content: 'done' },
    ]);
  });

  test('two stores writing the same session stay correct (the stale cache is detected)', async () => {
    const first = open();
    const second = open();
    await first.save(record('s-1', messages('m', 2)));
    await second.save(record('s-1', messages('m', 4)));
    await first.save(record('s-1', messages('m', 6)));
    expect((await second.load('s-1'))?.conversation).toEqual(messages('m', 6));
    expect(messageRows(raw(), 's-1')).toHaveLength(6);
  });

  test('a failed save leaves the stored session as it was', async () => {
    const store = open();
    await store.save(record('s-1', messages('m', 2)));
    const db = raw();
    db.exec(`CREATE TRIGGER fail_insert BEFORE INSERT ON sluice_session_messages
             BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
    await expect(store.save(record('s-1', messages('m', 4)))).rejects.toThrow(/disk full/);
    db.exec('DROP TRIGGER fail_insert');
    expect(await store.load('s-1')).toStrictEqual(record('s-1', messages('m', 2)));
    await store.save(record('s-1', messages('m', 4)));
    expect((await store.load('s-1'))?.conversation).toEqual(messages('m', 4));
  });
});

describe('SqliteSessionStore bounds', () => {
  test('stored history is bounded by message count like the bridge bounds it in memory', async () => {
    const store = open({ maxConversationMessages: 4 });
    const db = raw();
    const log = new ConversationLog(4, DEFAULT_MAX_CONVERSATION_BYTES);
    for (let turn = 0; turn < 10; turn++) {
      for (const message of messages('m', 2, turn * 2)) log.append(message);
      await store.save(record('s-1', log.snapshot()));
      expect(messageRows(db, 's-1').length).toBeLessThanOrEqual(4);
    }
    expect((await store.load('s-1'))?.conversation).toEqual(log.snapshot());
    expect((await store.load('s-1'))?.conversation).toEqual(messages('m', 4, 16));
  });

  test('a record longer than the bound keeps its newest messages (the store trims too)', async () => {
    const store = open({ maxConversationMessages: 3 });
    await store.save(record('s-1', messages('m', 8)));
    expect((await store.load('s-1'))?.conversation).toEqual(messages('m', 3, 5));
    expect(messageRows(raw(), 's-1')).toHaveLength(3);
  });

  test('stored history is bounded by UTF-8 bytes exactly as ConversationLog trims', async () => {
    const store = open({ maxConversationBytes: 10 });
    const conversation: ConversationMessage[] = [
      { role: 'user', content: 'aaaa' },
      { role: 'assistant', content: 'ééé' }, // 6 bytes
      { role: 'tool', content: 'b', name: 'x', toolCallId: 'yz' }, // 4 bytes
    ];
    await store.save(record('s-1', conversation));
    const log = new ConversationLog(DEFAULT_MAX_CONVERSATION_MESSAGES, 10, conversation);
    expect((await store.load('s-1'))?.conversation).toEqual(log.snapshot());
    expect(log.snapshot()).toEqual(conversation.slice(1));
  });

  test('a single message larger than the byte bound leaves an empty history, as in memory', async () => {
    const store = open({ maxConversationBytes: 8 });
    await store.save(record('s-1', [{ role: 'user', content: 'x'.repeat(9) }]));
    expect((await store.load('s-1'))?.conversation).toEqual([]);
  });

  test('saving a session beyond maxSessions deletes the least recently saved one', async () => {
    const store = open({ maxSessions: 3 });
    for (const id of ['a', 'b', 'c']) await store.save(record(id, messages(id, 2)));
    await store.save(record('a', messages('a', 4))); // a is now the most recently saved
    await store.save(record('d', messages('d', 2)));
    expect(await store.load('b')).toBeUndefined();
    expect(messageRows(raw(), 'b')).toEqual([]);
    for (const id of ['a', 'c', 'd']) expect(await store.load(id)).toBeDefined();
  });

  test('updating a session never evicts another one', async () => {
    const store = open({ maxSessions: 2 });
    await store.save(record('a'));
    await store.save(record('b'));
    for (let turn = 1; turn <= 3; turn++) await store.save(record('a', messages('a', turn * 2)));
    expect(await store.load('b')).toBeDefined();
  });
});

describe('SqliteSessionStore listing', () => {
  async function seed(store: Pick<SqliteSessionStore, 'save'>): Promise<void> {
    for (let index = 0; index < 5; index++)
      await store.save(record(`w-${index}`, messages('m', 1), { createdAt: 1000 + (index % 3) }));
    await store.save(record('other', [], { workspaceCwd: '/elsewhere', cwd: '/elsewhere' }));
  }

  test('§4 lists one workspace, newest first (createdAt, then sessionId), page by page', async () => {
    const store = open();
    await seed(store);
    const first = await store.list('/work', { size: 2 });
    expect(first.sessions.map((session) => session.sessionId)).toEqual(['w-2', 'w-4']);
    expect(first.nextCursor).toBeTypeOf('string');
    const second = await store.list('/work', { size: 2, cursor: first.nextCursor });
    expect(second.sessions.map((session) => session.sessionId)).toEqual(['w-1', 'w-3']);
    const third = await store.list('/work', { size: 2, cursor: second.nextCursor });
    expect(third.sessions.map((session) => session.sessionId)).toEqual(['w-0']);
    expect(third.nextCursor).toBeUndefined();
  });

  test('§4 paging is stable: later saves neither repeat nor skip a session of the listing', async () => {
    const store = open();
    await seed(store);
    const first = await store.list('/work', { size: 2 });
    // a session updated meanwhile keeps its place; a new one comes before the cursor
    await store.save(record('w-1', messages('m', 2), { createdAt: 1001, updatedAt: 9_999 }));
    await store.save(record('w-new', [], { createdAt: 5000 }));
    const rest = await store.list('/work', { size: 10, cursor: first.nextCursor });
    expect([...first.sessions, ...rest.sessions].map((session) => session.sessionId)).toEqual([
      'w-2',
      'w-4',
      'w-1',
      'w-3',
      'w-0',
    ]);
  });

  test('the MemorySessionStore lists exactly like the SQLite store', async () => {
    const sqlite = open();
    const memory = new MemorySessionStore();
    await seed(sqlite);
    await seed(memory);
    for (const size of [1, 2, 5, 10]) {
      const pages = async (store: SqliteSessionStore | MemorySessionStore): Promise<string[][]> => {
        const result: string[][] = [];
        let cursor: string | undefined;
        do {
          const page = await store.list('/work', { size, ...(cursor === undefined ? {} : { cursor }) });
          result.push(page.sessions.map((session) => session.sessionId));
          cursor = page.nextCursor;
        } while (cursor !== undefined);
        return result;
      };
      expect(await pages(memory)).toEqual(await pages(sqlite));
    }
    expect((await memory.list('/work', { size: 1 })).sessions[0]).toEqual(
      (await sqlite.list('/work', { size: 1 })).sessions[0],
    );
  });

  test('a summary carries the metadata and the number of stored messages, not the messages', async () => {
    const store = open();
    await store.save(
      record('s-1', messages('m', 3), { displayName: 'named', forkedFrom: { sessionId: 's-0' } }),
    );
    const { sessions, nextCursor } = await store.list('/work');
    expect(nextCursor).toBeUndefined();
    expect(sessions).toStrictEqual([
      {
        sessionId: 's-1',
        workspaceCwd: '/work',
        cwd: '/work/sub',
        scope: 'thread',
        createdAt: 1_700_000_000_000,
        updatedAt: 1_700_000_000_000,
        displayName: 'named',
        forkedFrom: { sessionId: 's-0' },
        messageCount: 3,
      },
    ]);
  });

  test('an unknown workspace lists nothing', async () => {
    const store = open();
    await seed(store);
    expect(await store.list('/nowhere')).toEqual({ sessions: [] });
  });

  test('a cursor the store did not hand out is rejected with invalid_cursor', async () => {
    const store = open();
    await expect(store.list('/work', { cursor: 'not a cursor' })).rejects.toBeInstanceOf(InvalidCursorError);
    await expect(
      store.list('/work', { cursor: Buffer.from('{"a":1}').toString('base64url') }),
    ).rejects.toMatchObject({ code: 'invalid_cursor' });
  });

  test.each([0, 1001, 1.5])('a page size of %s is rejected with a RangeError naming it', async (size) => {
    const store = open();
    await expect(store.list('/work', { size })).rejects.toThrow(/size must be an integer in \[1, 1000\]/);
  });
});

describe('SqliteSessionStore schema', () => {
  test('opening twice migrates once and keeps its version in its own bookkeeping row', async () => {
    await open().close();
    await open().close();
    const db = raw();
    expect(migrateSessionStore(db)).toEqual({
      from: SESSION_STORE_SCHEMA_VERSION,
      to: SESSION_STORE_SCHEMA_VERSION,
    });
    expect(sessionStoreSchemaVersion(db)).toBe(SESSION_STORE_SCHEMA_VERSION);
    expect(db.prepare('SELECT component, version FROM sluice_schema_migrations').all()).toEqual([
      { component: SESSION_STORE_COMPONENT, version: SESSION_STORE_SCHEMA_VERSION },
    ]);
  });

  test("the store never touches PRAGMA user_version (it is the journal's)", async () => {
    await open().close();
    const db = raw();
    expect(db.pragma('user_version', { simple: true })).toBe(0);
    db.pragma('user_version = 7');
    await open().close();
    expect(db.pragma('user_version', { simple: true })).toBe(7);
  });

  test('the file is in WAL mode with a busy timeout', () => {
    open({ busyTimeoutMs: 1234 });
    expect(raw().pragma('journal_mode', { simple: true })).toBe('wal');
  });

  test('indexes exist for listing by workspace and for the messages of a session', () => {
    open();
    const db = raw();
    const plan = (sql: string): string =>
      db
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .all('x')
        .map((row) => (row as { detail: string }).detail)
        .join('\n');
    expect(
      plan('SELECT * FROM sluice_sessions WHERE workspace_cwd = ? ORDER BY created_at, session_id'),
    ).toMatch(/USING INDEX sluice_sessions_workspace/);
    expect(plan('SELECT * FROM sluice_session_messages WHERE session_id = ? ORDER BY seq')).toMatch(
      /USING INDEX/,
    );
  });

  test('a schema newer than this build is refused and left as it was', async () => {
    const store = open();
    await store.save(record('s-1', messages('m', 2)));
    await store.close();
    const db = raw();
    db.prepare('UPDATE sluice_schema_migrations SET version = ? WHERE component = ?').run(
      SESSION_STORE_SCHEMA_VERSION + 1,
      SESSION_STORE_COMPONENT,
    );
    expect(() => open()).toThrow(SessionStoreSchemaTooNewError);
    expect(sessionStoreSchemaVersion(db)).toBe(SESSION_STORE_SCHEMA_VERSION + 1);
    expect(db.prepare('SELECT count(*) AS n FROM sluice_session_messages').get()).toEqual({ n: 2 });
  });

  test('a failing migration step leaves no table and no version behind', () => {
    const db = raw();
    const broken = [
      ...SESSION_STORE_MIGRATIONS,
      { version: SESSION_STORE_SCHEMA_VERSION + 1, sql: 'NOT SQL' },
    ];
    expect(() => migrateSessionStore(db, broken)).toThrow();
    expect(sessionStoreSchemaVersion(db)).toBe(0);
    expect(
      db.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE name LIKE 'sluice_session%'`).get(),
    ).toEqual({ n: 0 });
  });

  test('migration versions must increase', () => {
    expect(() =>
      migrateSessionStore(raw(), [
        { version: 2, sql: '' },
        { version: 2, sql: '' },
      ]),
    ).toThrow(/increasing positive integers, got 2 after 2/);
  });
});

describe('SqliteSessionStore bad input and lifecycle', () => {
  test.each([
    ['sessionId', { sessionId: '' }, /sessionId must be a non-empty string/],
    ['workspaceCwd', { workspaceCwd: 3 }, /workspaceCwd must be a non-empty string/],
    ['scope', { scope: 'team' }, /scope must be 'single' or 'thread'/],
    ['createdAt', { createdAt: Number.NaN }, /createdAt must be a finite number/],
    ['forkedFrom', { forkedFrom: { id: 'x' } }, /forkedFrom must be/],
    ['conversation', { conversation: [{ role: 'system', content: 'x' }] }, /conversation\[0\]/],
  ])(
    'a record with a malformed %s is rejected with a TypeError and nothing is stored',
    async (_, bad, message) => {
      const store = open();
      const saving = store.save({ ...record('s-1'), ...(bad as Partial<SessionRecord>) });
      await expect(saving).rejects.toThrow(TypeError);
      await expect(saving).rejects.toThrow(message);
      expect(await store.load('s-1')).toBeUndefined();
    },
  );

  test('delete removes the session and its messages; deleting again reports false', async () => {
    const store = open();
    await store.save(record('s-1', messages('m', 3)));
    expect(await store.delete('s-1')).toBe(true);
    expect(await store.load('s-1')).toBeUndefined();
    expect(messageRows(raw(), 's-1')).toEqual([]);
    expect(await store.delete('s-1')).toBe(false);
  });

  test('a closed store rejects with session_store_closed; closing twice is fine', async () => {
    const store = open();
    await store.close();
    await store.close();
    await expect(store.save(record('s-1'))).rejects.toBeInstanceOf(SessionStoreClosedError);
    await expect(store.load('s-1')).rejects.toMatchObject({ code: 'session_store_closed' });
    await expect(store.list('/work')).rejects.toBeInstanceOf(SessionStoreClosedError);
  });

  test.each([
    [{ maxSessions: 0 }, /maxSessions must be a positive integer or Infinity, got 0/],
    [{ maxConversationMessages: 1.5 }, /maxConversationMessages must be a positive integer, got 1.5/],
    [{ maxConversationBytes: -1 }, /maxConversationBytes must be a positive integer, got -1/],
    [{ maxCacheBytes: -1 }, /maxCacheBytes must be a non-negative integer, got -1/],
    [{ busyTimeoutMs: Number.NaN }, /busyTimeoutMs must be a non-negative integer, got NaN/],
    [{ synchronous: 'OFF' }, /synchronous must be 'NORMAL' or 'FULL', got OFF/],
    [{ path: '' }, /path must be a database file path/],
  ])('option %o is rejected with a RangeError naming the value', (options, message) => {
    expect(
      () => new SqliteSessionStore({ path: file, ...(options as Partial<SqliteSessionStoreOptions>) }),
    ).toThrow(message);
  });

  test('the store creates the directory of its file', async () => {
    const nested = path.join(dir, 'a', 'b', 'sluice.db');
    const store = new SqliteSessionStore({ path: nested });
    closers.push(() => store.close());
    await store.save(record('s-1'));
    expect(fs.existsSync(nested)).toBe(true);
  });
});
