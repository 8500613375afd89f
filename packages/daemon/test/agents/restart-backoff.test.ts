import { FakeClock } from '@sluice/runtime/testing';
import { describe, expect, test } from 'vitest';
import { EARLY_DEATH_MS, MAX_HOMES, RestartBackoff } from '../../src/agents/acp/restart-backoff.js';

// Issue 27: a preheated agent that dies soon after every start is restarted with growing waits,
// not in a loop; one that lived a while is replaced at once.

describe('restarting a preheated agent after its process died', () => {
  const setup = () => {
    const clock = new FakeClock();
    const backoff = new RestartBackoff(clock);
    let restarts = 0;
    const die = (livedMs: number) => {
      const startedAt = clock.now();
      clock.advance(livedMs);
      backoff.afterDeath('qwen|/ws', startedAt, () => restarts++);
    };
    return { clock, backoff, die, restarts: () => restarts };
  };

  test('early deaths in a row wait 1 s, 2 s, 4 s … before the next start', () => {
    const { clock, die, restarts } = setup();
    for (const [n, wait] of [
      [1, 1_000],
      [2, 2_000],
      [3, 4_000],
    ] as const) {
      die(500);
      clock.advance(wait - 1);
      expect(restarts()).toBe(n - 1);
      clock.advance(1);
      expect(restarts()).toBe(n);
    }
  });

  test('the wait stops growing at a minute', () => {
    const { clock, die, restarts } = setup();
    for (let i = 0; i < 12; i++) {
      die(100);
      clock.advance(60_000);
    }
    expect(restarts()).toBe(12);
  });

  test('a process that lived a minute is replaced at once, and the count starts again', () => {
    const { clock, die, restarts } = setup();
    die(100);
    die(100); // its restart is still pending: a second early death in a row
    clock.advance(2_000);
    expect(restarts()).toBe(2);
    die(EARLY_DEATH_MS);
    expect(restarts()).toBe(3);
    die(100);
    clock.advance(1_000);
    expect(restarts()).toBe(4);
  });

  test('early deaths are remembered for the last 1,024 homes: the oldest one starts over at 1 s', () => {
    const clock = new FakeClock();
    const backoff = new RestartBackoff(clock);
    const restarted: string[] = [];
    const dieEarly = (home: string): void =>
      backoff.afterDeath(home, clock.now(), () => restarted.push(home));
    dieEarly('home-0');
    for (let i = 1; i <= MAX_HOMES; i++) dieEarly(`home-${i}`);
    clock.advance(1_000); // every first early death waits 1 s
    expect(restarted).toHaveLength(MAX_HOMES + 1);
    restarted.length = 0;
    dieEarly('home-0'); // forgotten: a first early death again
    dieEarly(`home-${MAX_HOMES}`); // remembered: its second in a row
    clock.advance(1_000);
    expect(restarted).toEqual(['home-0']);
    clock.advance(1_000);
    expect(restarted).toEqual(['home-0', `home-${MAX_HOMES}`]);
  });

  test('a shutdown drops the pending restarts', () => {
    const { clock, backoff, die, restarts } = setup();
    die(100);
    backoff.cancel();
    clock.advance(120_000);
    expect(restarts()).toBe(0);
  });
});
