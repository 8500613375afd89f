import { describe, expect, test } from 'vitest';
import { OverloadedError, retryOnCapacity } from '../src/index.js';
import { FakeClock } from '../src/testing/index.js';

// Issue 19 item 10 (docs/decisions/018): a caller that holds an accepted prompt waits for model
// capacity — the refusal's Retry-After each time — rather than failing late; SCH-14's refusal
// stays typed and synchronous underneath.

const refused = (retryAfterMs: number): OverloadedError => new OverloadedError('QueueFull', 0, retryAfterMs);

/** Lets the awaited attempt settle and the wait's timer be set. */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('retryOnCapacity', () => {
  test('waits each refusal’s retryAfterMs, then returns the admitted attempt', async () => {
    const clock = new FakeClock();
    const starts: number[] = [];
    const answers = [refused(2_000), refused(3_000), 'ran'];
    const result = retryOnCapacity(
      async () => {
        starts.push(clock.now());
        const next = answers[starts.length - 1];
        if (next instanceof Error) throw next;
        return next;
      },
      { signal: new AbortController().signal, clock },
    );
    await settle();
    clock.advance(2_000);
    await settle();
    clock.advance(3_000);
    await expect(result).resolves.toBe('ran');
    expect(starts.map((at) => at - starts[0]!)).toEqual([0, 2_000, 5_000]);
  });

  test('after maxWaitMs of waiting, the last refusal stands', async () => {
    const clock = new FakeClock();
    let attempts = 0;
    const result = retryOnCapacity(
      () => {
        attempts++;
        return Promise.reject(refused(4_000));
      },
      { signal: new AbortController().signal, clock, maxWaitMs: 6_000 },
    ).catch((error: unknown) => error);
    await settle();
    clock.advance(4_000);
    await settle();
    clock.advance(2_000); // the second wait is cut to what is left of the bound
    await expect(result).resolves.toBeInstanceOf(OverloadedError);
    expect(attempts).toBe(3);
  });

  test('an abort stops the wait at once and the next attempt sees it', async () => {
    const clock = new FakeClock();
    const abort = new AbortController();
    let attempts = 0;
    const result = retryOnCapacity(
      () => {
        attempts++;
        return Promise.reject(abort.signal.aborted ? new Error('aborted') : refused(60_000));
      },
      { signal: abort.signal, clock },
    ).catch((error: unknown) => error);
    await settle();
    abort.abort();
    await expect(result).resolves.toMatchObject({ message: 'aborted' });
    expect(attempts).toBe(2);
  });

  test('any other failure propagates without a wait', async () => {
    const clock = new FakeClock();
    let attempts = 0;
    const failure = new Error('provider said no');
    await expect(
      retryOnCapacity(
        () => {
          attempts++;
          return Promise.reject(failure);
        },
        { signal: new AbortController().signal, clock },
      ),
    ).rejects.toBe(failure);
    expect(attempts).toBe(1);
  });

  test('maxWaitMs must be a non-negative integer, named in the error', async () => {
    await expect(
      retryOnCapacity(() => Promise.resolve(1), { signal: new AbortController().signal, maxWaitMs: -1 }),
    ).rejects.toThrow(/maxWaitMs must be a non-negative integer, got -1/);
  });
});
