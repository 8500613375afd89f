import { describe, expect, test } from 'vitest';
import { clockedWindows, type ClockedWindows } from '../../src/http/rate-limit-store.js';

// The in-process counters of `--rate-limit` (docs/decisions/035): fixed windows on the daemon's
// clock, at most a bounded number of clients per tier.

const WINDOW_MS = 1_000;

function store(now: () => number, clients: number): ClockedWindows {
  const Store = clockedWindows(now, clients);
  return new Store({}).child({} as never) as ClockedWindows;
}

/** The count and the rest of the window after one more request of `key`. */
function hit(windows: ClockedWindows, key: string): { current: number; ttl: number } {
  let result: { current: number; ttl: number } | undefined;
  windows.incr(key, (_error, answer) => (result = answer), WINDOW_MS);
  return result!;
}

describe('the rate limiter’s in-process windows', () => {
  test("a client's window starts at its first request and ends WINDOW_MS later, on the injected clock", () => {
    const clock = { now: 5_000 };
    const windows = store(() => clock.now, 10);
    expect(hit(windows, 'a')).toEqual({ current: 1, ttl: 1_000 });
    clock.now += 999;
    expect(hit(windows, 'a')).toEqual({ current: 2, ttl: 1 });
    clock.now += 1;
    expect(hit(windows, 'a')).toEqual({ current: 1, ttl: 1_000 });
  });

  test('at most `clients` windows are kept: the least recently counted client is forgotten first', () => {
    const windows = store(() => 0, 3);
    for (const key of ['a', 'b', 'c']) hit(windows, key);
    hit(windows, 'a'); // a is now the most recent; b the least
    hit(windows, 'd');
    expect(windows.size).toBe(3);
    expect(hit(windows, 'a').current).toBe(3); // kept
    expect(hit(windows, 'b').current).toBe(1); // forgotten: a new window (which forgets c)
    expect(windows.size).toBe(3);
  });

  test('each tier (a child store) counts on its own', () => {
    const Store = clockedWindows(() => 0, 10);
    const root = new Store({});
    const prompt = root.child({} as never) as ClockedWindows;
    const read = root.child({} as never) as ClockedWindows;
    hit(prompt, 'a');
    expect(hit(read, 'a').current).toBe(1);
  });

  test('a bound that is not a positive integer is refused, naming it', () => {
    expect(() => clockedWindows(() => 0, 0)).toThrow('rate limit clients must be');
  });
});
