import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  compareListPosition,
  encodeListCursor,
  historyDelta,
  latestVersion,
  parseListCursor,
  type ConversationMessage,
} from '../src/index.js';

describe('the listing cursor every store hands out', () => {
  test('a cursor names exactly the position it was made from', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 48 }), fc.string(), (createdAt, sessionId) => {
        expect(parseListCursor(encodeListCursor({ createdAt, sessionId }))).toEqual({ createdAt, sessionId });
      }),
    );
  });

  test('anything else is no cursor', () => {
    const json = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const cursor of [
      undefined,
      7,
      '',
      'not a cursor',
      'x'.repeat(1025),
      json([1]),
      json([1, 'a', 2]),
      json(['1', 'a']),
    ])
      expect(parseListCursor(cursor)).toBeUndefined();
  });

  test('newest first, ties broken by session id, descending', () => {
    const positions = [
      { createdAt: 1, sessionId: 'b' },
      { createdAt: 2, sessionId: 'a' },
      { createdAt: 1, sessionId: 'c' },
    ];
    expect(positions.sort(compareListPosition).map((p) => p.sessionId)).toEqual(['a', 'c', 'b']);
  });
});

describe('historyDelta: what a save writes of a history', () => {
  const message = (content: string): ConversationMessage => ({ role: 'user', content });

  test('keeps the stored messages that start the new history, trims the others, appends the rest', () => {
    const delta = historyDelta(
      [message('a'), message('b'), message('c')],
      [message('b'), message('c'), message('d')],
      10,
      13,
    );
    expect(delta).toEqual({
      restart: false,
      trimmed: 1,
      firstSeq: 11,
      appendAt: 13,
      added: [message('d')],
      nextSeq: 14,
    });
  });

  test('stored rows that do not match their range start the history afresh at the next seq', () => {
    const delta = historyDelta(undefined, [message('a')], 10, 13);
    expect(delta).toEqual({
      restart: true,
      trimmed: 0,
      firstSeq: 13,
      appendAt: 13,
      added: [message('a')],
      nextSeq: 14,
    });
  });
});

describe('migration order', () => {
  test('the latest version of increasing versions; 0 for none', () => {
    expect(latestVersion([])).toBe(0);
    expect(
      latestVersion([
        { version: 1, sql: '' },
        { version: 3, sql: '' },
      ]),
    ).toBe(3);
  });

  test('versions that do not increase are refused before anything runs', () => {
    expect(() =>
      latestVersion([
        { version: 1, sql: '' },
        { version: 1, sql: '' },
      ]),
    ).toThrow('migration versions must be increasing positive integers, got 1 after 1');
    expect(() => latestVersion([{ version: 1.5, sql: '' }])).toThrow(RangeError);
  });
});
