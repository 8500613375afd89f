import { expect, test } from 'vitest';
import { OverloadedError } from '../src/errors.js';
import { ask, runtimeFixture, track } from './helpers/runtime-fixture.js';
import { settle } from './helpers/scripted-provider.js';

// Issue 19 item 11: a model-capacity refusal says when to come back, computed from the queue and
// how long calls recently held a slot — never below 1 s.

function refusal(run: () => unknown): OverloadedError {
  try {
    run();
  } catch (error) {
    if (error instanceof OverloadedError) return error;
    throw error;
  }
  throw new Error('not refused');
}

test('Retry-After follows the calls ahead and the recent slot time, never below 1 s', async () => {
  const { runtime, provider, clock } = runtimeFixture({ maxConcurrency: 2, maxQueued: 2, maxInflight: 64 });
  // Before any call finished the estimate has nothing to go on: the 1 s floor.
  const early = [track(runtime.complete(ask())), track(runtime.complete(ask()))];
  track(runtime.complete(ask()));
  track(runtime.complete(ask()));
  expect(refusal(() => runtime.complete(ask())).retryAfterMs).toBe(1_000);
  // Calls that held their slot 6 s each: four ahead on two slots, plus the caller → 3 rounds.
  await settle();
  clock.advance(6_000);
  provider.calls[0]!.succeed('a');
  provider.calls[1]!.succeed('b');
  await settle();
  expect(early.map((c) => c.status)).toEqual(['resolved', 'resolved']);
  track(runtime.complete(ask()));
  track(runtime.complete(ask()));
  const later = refusal(() => runtime.complete(ask()));
  expect(later).toMatchObject({ capacity: 'QueueFull', code: 'model_overloaded' });
  expect(later.retryAfterMs).toBe(18_000);
});
