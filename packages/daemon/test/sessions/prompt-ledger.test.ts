import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store.js';
import { PromptLedger } from '../../src/sessions/prompt-ledger.js';

// Issue 19 item 8: the admission ledger. Accepted prompts are committed in one transaction per
// turn of the event loop before their 202; a prompt that ends first is never written.

let dir: string;
let store: SqliteSessionStore;
const errors: unknown[] = [];

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-ledger-'));
  store = new SqliteSessionStore({ path: path.join(dir, 'sessions.db') });
  errors.length = 0;
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function rows(): Array<{ session_id: string; prompt_id: string }> {
  const db = new Database(path.join(dir, 'sessions.db'), { readonly: true });
  try {
    return db
      .prepare('SELECT session_id, prompt_id FROM sluice_session_accepted_prompts ORDER BY prompt_id')
      .all() as Array<{ session_id: string; prompt_id: string }>;
  } finally {
    db.close();
  }
}

const ledger = (): PromptLedger => new PromptLedger(store, (error) => errors.push(error));

describe('PromptLedger', () => {
  test('an accepted prompt is committed before its acceptance resolves', async () => {
    const l = ledger();
    const recorded = [
      l.accept({ sessionId: 's', promptId: 'p1', acceptedAt: 1 }),
      l.accept({ sessionId: 's', promptId: 'p2', acceptedAt: 2 }),
    ];
    expect(rows()).toEqual([]);
    await Promise.all(recorded);
    expect(rows()).toEqual([
      { session_id: 's', prompt_id: 'p1' },
      { session_id: 's', prompt_id: 'p2' },
    ]);
  });

  test('a prompt that ends before its batch is written is never written', async () => {
    const l = ledger();
    const recorded = l.accept({ sessionId: 's', promptId: 'p1', acceptedAt: 1 });
    l.settle({ sessionId: 's', promptId: 'p1' });
    await recorded;
    await new Promise((resolve) => setImmediate(resolve));
    expect(rows()).toEqual([]);
  });

  test('a prompt that ends after it was written is removed; what is left is taken once, oldest first', async () => {
    const l = ledger();
    await Promise.all([
      l.accept({ sessionId: 's', promptId: 'p2', acceptedAt: 2 }),
      l.accept({ sessionId: 's', promptId: 'p1', acceptedAt: 1 }),
      l.accept({ sessionId: 's', promptId: 'p3', acceptedAt: 3 }),
    ]);
    l.settle({ sessionId: 's', promptId: 'p3' });
    const left = await l.takeUnsettled('s');
    expect(left.map((p) => p.promptId)).toEqual(['p1', 'p2']);
    expect(await l.takeUnsettled('s')).toEqual([]);
    expect(rows()).toEqual([]);
  });

  test('a failed write is reported and still lets the prompt be answered', async () => {
    const l = ledger();
    await store.close();
    await l.accept({ sessionId: 's', promptId: 'p1', acceptedAt: 1 });
    expect(errors.map(String)).toEqual([expect.stringMatching(/SessionStoreClosedError.*is closed/)]);
  });

  test('without a store that keeps a ledger nothing is recorded and nothing waits', () => {
    const l = new PromptLedger(undefined, () => {});
    expect(l.accept({ sessionId: 's', promptId: 'p1', acceptedAt: 1 })).toBeUndefined();
  });
});
