import { afterEach, describe, expect, test, vi } from 'vitest';
import { DaemonHttpError, DaemonPendingPromptLimitError, withRetry } from '../src/index.js';
import { parseRetryAfter } from '../src/retry-after.js';
import { jitteredBackoff } from '../src/backoff.js';

const full = (retryAfterMs?: number) =>
  new DaemonPendingPromptLimitError('s', 5, 5, {
    local: false,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });

describe('BP-8 withRetry, for callers who retry a 503 with Retry-After', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  test('retries a retryable error and returns the first success', async () => {
    const attempts: number[] = [];
    const result = await withRetry(
      async (attempt) => {
        attempts.push(attempt);
        if (attempt < 2) throw full(0);
        return 'ok';
      },
      { retries: 3, baseMs: 1, capMs: 2 },
    );
    expect(result).toBe('ok');
    expect(attempts).toEqual([0, 1, 2]);
  });

  test('gives up after `retries` and rethrows the last error', async () => {
    let calls = 0;
    const last = full(0);
    await expect(
      withRetry(
        async () => {
          calls++;
          throw last;
        },
        { retries: 2, baseMs: 1, capMs: 2 },
      ),
    ).rejects.toBe(last);
    expect(calls).toBe(3);
  });

  test('a non-retryable error is thrown at once', async () => {
    let calls = 0;
    const notFound = new DaemonHttpError(404, { error: 'gone', code: 'session_not_found' }, 'gone');
    await expect(
      withRetry(async () => {
        calls++;
        throw notFound;
      }),
    ).rejects.toBe(notFound);
    expect(calls).toBe(1);
  });

  test('a Retry-After longer than capMs is not shortened: the error is rethrown instead', async () => {
    let calls = 0;
    await expect(
      withRetry(
        async () => {
          calls++;
          throw full(5_000);
        },
        { retries: 3, baseMs: 1, capMs: 1_000 },
      ),
    ).rejects.toBeInstanceOf(DaemonPendingPromptLimitError);
    expect(calls).toBe(1);
  });

  test('a Retry-After is a floor and the jitter comes on top, within capMs: clients refused together come back spread out', async () => {
    vi.useFakeTimers();
    /** Milliseconds withRetry waits after one refusal with `retryAfterMs`, for a given random draw. */
    const waitFor = async (retryAfterMs: number, random: number, capMs: number): Promise<number> => {
      let calls = 0;
      const done = withRetry(
        async () => {
          if (++calls === 1) throw full(retryAfterMs);
          return 'ok';
        },
        { retries: 1, baseMs: 1_000, capMs, random: () => random },
      );
      let waited = 0;
      await vi.advanceTimersByTimeAsync(0);
      while (calls === 1) {
        await vi.advanceTimersByTimeAsync(1);
        waited++;
      }
      await expect(done).resolves.toBe('ok');
      return waited;
    };
    expect(await waitFor(5_000, 0, 10_000)).toBe(5_000);
    expect(await waitFor(5_000, 0.5, 10_000)).toBe(5_500); // + U[0, baseMs·2^0)
    expect(await waitFor(5_000, 0.999, 5_200)).toBe(5_199); // the jitter only fills the room left below capMs
    expect(await waitFor(0, 0.5, 10_000)).toBe(500); // no Retry-After: plain jittered backoff
  });

  test('an abort during the wait rejects with the abort reason', async () => {
    const abort = new AbortController();
    const pending = withRetry(
      async () => {
        setImmediate(() => abort.abort(new Error('stop')));
        throw full(900);
      },
      { retries: 3, baseMs: 1, capMs: 1_000, signal: abort.signal },
    );
    await expect(pending).rejects.toThrow('stop');
  });

  test('options are validated with the value in the message', async () => {
    await expect(withRetry(async () => 1, { retries: -1 })).rejects.toThrow(
      /retries must be a non-negative integer, got -1/,
    );
    await expect(withRetry(async () => 1, { capMs: NaN })).rejects.toThrow(
      /capMs must be a positive finite number, got NaN/,
    );
  });
});

describe('BP-8 jittered backoff', () => {
  test('stays within [0, min(cap, base·2^attempt)] and grows with the attempt', () => {
    expect(jitteredBackoff(0, { baseMs: 100, capMs: 1000, random: () => 0.999 })).toBe(99);
    expect(jitteredBackoff(3, { baseMs: 100, capMs: 1000, random: () => 0.999 })).toBe(799);
    expect(jitteredBackoff(10, { baseMs: 100, capMs: 1000, random: () => 0.999 })).toBe(999);
    expect(jitteredBackoff(10, { baseMs: 100, capMs: 1000, random: () => 0 })).toBe(0);
  });
});

describe('BP-8 parseRetryAfter', () => {
  test('reads delta-seconds and HTTP dates, ignores garbage', () => {
    expect(parseRetryAfter('5')).toBe(5000);
    expect(parseRetryAfter(' 0 ')).toBe(0);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:03 GMT', now)).toBe(3000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('-1')).toBeUndefined();
  });
});
