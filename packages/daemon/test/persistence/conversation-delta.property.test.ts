import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { boundedStart, conversationOverlap, sameMessage } from '@sluice/store';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store.js';
import { ConversationLog, type ConversationMessage } from '../../src/sessions/index.js';

// A tiny alphabet, so that repeated messages (the hard case for finding the overlap) are common.
const message: fc.Arbitrary<ConversationMessage> = fc.record({
  role: fc.constantFrom('user' as const, 'assistant' as const, 'tool' as const),
  content: fc.constantFrom('a', 'b', 'é', 'long text'),
});
const conversation = fc.array(message, { maxLength: 12 });

function bruteForceOverlap(stored: ConversationMessage[], next: ConversationMessage[]): number {
  for (let length = Math.min(stored.length, next.length); length > 0; length--) {
    const suffix = stored.slice(stored.length - length);
    if (suffix.every((item, index) => sameMessage(item, next[index] as ConversationMessage))) return length;
  }
  return 0;
}

describe('conversationOverlap', () => {
  test('finds the longest suffix of the stored history that starts the next one', () => {
    fc.assert(
      fc.property(conversation, conversation, (stored, next) => {
        expect(conversationOverlap(stored, next)).toBe(bruteForceOverlap(stored, next));
      }),
      { numRuns: 2000 },
    );
  });

  test('a trimmed and extended history keeps every message it still holds', () => {
    fc.assert(
      fc.property(conversation, fc.nat(12), conversation, (stored, trim, appended) => {
        const kept = stored.slice(Math.min(trim, stored.length));
        expect(conversationOverlap(stored, [...kept, ...appended])).toBeGreaterThanOrEqual(kept.length);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('boundedStart', () => {
  test('keeps exactly what a ConversationLog with the same bounds keeps', () => {
    fc.assert(
      fc.property(
        conversation,
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 30 }),
        (all, count, bytes) => {
          const log = new ConversationLog(count, bytes, all);
          expect(all.slice(boundedStart(all, count, bytes))).toEqual(log.snapshot());
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('SqliteSessionStore under random histories', () => {
  let dir: string;
  let store: SqliteSessionStore;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-delta-'));
    store = new SqliteSessionStore({ path: path.join(dir, 'sluice.db'), maxConversationMessages: 6 });
  });

  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('after every save the store holds exactly the bounded history the bridge holds', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(message, { minLength: 1, maxLength: 4 }), { maxLength: 8 }),
        async (steps) => {
          const sessionId = `s-${++run}`;
          const log = new ConversationLog(6, 40);
          for (const added of steps) {
            for (const item of added) log.append(item);
            await store.save({
              sessionId,
              workspaceCwd: '/work',
              cwd: '/work',
              scope: 'thread',
              createdAt: 0,
              updatedAt: 0,
              conversation: log.snapshot(),
            });
            expect((await store.load(sessionId))?.conversation).toEqual(log.snapshot());
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
