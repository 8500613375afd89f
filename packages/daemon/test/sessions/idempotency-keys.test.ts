import { describe, expect, test } from 'vitest';
import { IdempotencyKeys, MAX_IDEMPOTENCY_KEYS_PER_SESSION } from '../../src/sessions/idempotency.js';

// Issue 19 item 12: a session remembers a bounded number of Idempotency-Keys, oldest forgotten first.

const admission = (promptId: string) => ({
  promptId,
  queued: false,
  done: Promise.resolve({ promptId, stopReason: 'end_turn' }),
  lastEventId: 0,
  eventEpoch: 'e',
});

describe('IdempotencyKeys', () => {
  test('keeps at most MAX_IDEMPOTENCY_KEYS_PER_SESSION keys, forgetting the oldest first', () => {
    const keys = new IdempotencyKeys();
    for (let i = 0; i <= MAX_IDEMPOTENCY_KEYS_PER_SESSION; i++)
      keys.remember(`k${i}`, 'f', admission(`p${i}`));
    expect(keys.lookup('k0', 'f')).toBeUndefined();
    expect(keys.lookup('k1', 'f')).toMatchObject({ promptId: 'p1' });
    expect(keys.lookup(`k${MAX_IDEMPOTENCY_KEYS_PER_SESSION}`, 'f')).toMatchObject({
      promptId: `p${MAX_IDEMPOTENCY_KEYS_PER_SESSION}`,
    });
  });

  test('a known key with another fingerprint is a mismatch', () => {
    const keys = new IdempotencyKeys();
    keys.remember('k', 'f1', admission('p'));
    expect(keys.lookup('k', 'f2')).toBe('mismatch');
  });
});
