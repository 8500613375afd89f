import { describe, expect, test } from 'vitest';
import { CancelledError, ProviderError, RuntimeStoppedError } from '../src/errors.js';
import { ModelRuntime } from '../src/gateway/model-runtime.js';
import { MemoryJournal } from '../src/journal/memory-journal.js';
import type { ModelResultRecord } from '../src/journal/records.js';
import type { ModelProvider, ModelStreamEvent } from '../src/types.js';
import { FakeClock } from '../src/testing/index.js';
import { ask, runtimeFixture, track } from './helpers/runtime-fixture.js';
import { settle } from './helpers/scripted-provider.js';

/** A provider whose stream is a plain async generator that releases its resource in `finally`. */
function generatorProvider(body: () => AsyncGenerator<ModelStreamEvent>): ModelProvider {
  return {
    name: 'gen',
    defaultModel: 'gen-1',
    complete: () => Promise.reject(new Error('not used')),
    stream: () => body(),
  };
}

/** Reads `stream` to its end: the event types seen, and the error it ended with, if any. */
async function drain(stream: AsyncIterable<ModelStreamEvent>): Promise<{ types: string[]; error?: unknown }> {
  const types: string[] = [];
  try {
    for await (const event of stream) types.push(event.type);
  } catch (error) {
    return { types, error };
  }
  return { types };
}

describe('stream lifecycle', () => {
  test('a next() still pending when the consumer calls return() settles instead of hanging', async () => {
    const { runtime, provider, clock } = runtimeFixture();
    const iterator = runtime.stream(ask())[Symbol.asyncIterator]();
    const pending = track(iterator.next());
    await settle();
    expect(provider.calls).toHaveLength(1);
    // e.g. a consumer that raced next() against its own timeout and then gives up on the stream
    await iterator.return!();
    await settle();
    // The call itself was cancelled and cleaned up ...
    expect(runtime.schedulerSnapshot().inflight).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    // ... but whoever awaits the outstanding next() must not wait forever.
    expect(pending.status).not.toBe('pending');
  });

  test('the provider stream is closed (its finally runs) once it has sent finished', async () => {
    let released = 0;
    const provider = generatorProvider(async function* () {
      try {
        yield { type: 'delta', text: 'hi' };
        yield { type: 'finished', stopReason: 'end_turn', usage: { inputTokens: 1, outputTokens: 1 } };
      } finally {
        released++; // e.g. the HTTP response body / socket goes back to the pool
      }
    });
    const runtime = new ModelRuntime({ provider, journal: new MemoryJournal(), clock: new FakeClock() });
    const { types, error } = await drain(runtime.stream(ask()));
    await settle();
    expect(error).toBeUndefined();
    expect(types).toEqual(['delta', 'finished']);
    expect(released).toBe(1);
  });

  test('a provider stream that ends without finished is a provider error, not a whole answer', async () => {
    const provider = generatorProvider(async function* () {
      yield { type: 'delta', text: 'half an ans' };
    });
    const journal = new MemoryJournal();
    const runtime = new ModelRuntime({ provider, journal, clock: new FakeClock() });
    const stream = runtime.stream(ask());
    const { types, error } = await drain(stream);
    expect(types).toEqual(['delta']);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as Error).message).toContain('without finished');
    const result = journal.recordsForCall(stream.callId)[1] as ModelResultRecord;
    expect(result.outcome).toBe('error');
  });

  test("a provider stream whose return() throws does not replace the provider's own error", async () => {
    const provider: ModelProvider = {
      name: 'broken',
      defaultModel: 'broken-1',
      complete: () => Promise.reject(new Error('not used')),
      stream: () => ({
        [Symbol.asyncIterator]: () => ({
          next: () => Promise.reject(new Error('upstream reset')),
          return: () => {
            throw new Error('already closed');
          },
        }),
      }),
    };
    const journal = new MemoryJournal();
    const runtime = new ModelRuntime({ provider, journal, clock: new FakeClock() });
    const stream = runtime.stream(ask());
    const { error } = await drain(stream);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as Error).message).toContain('upstream reset');
    const result = journal.recordsForCall(stream.callId)[1] as ModelResultRecord;
    expect(result.error?.message).toContain('upstream reset');
  });

  test('shutdown({ abortRunning }) reports running calls as runtime_stopped, not as a host cancel', async () => {
    const { runtime, memory } = runtimeFixture();
    const iterator = runtime.stream(ask())[Symbol.asyncIterator]();
    const next = track(iterator.next());
    const running = track(runtime.complete(ask()));
    await settle();
    await runtime.shutdown({ abortRunning: true });
    await settle();
    expect(next.error).toBeInstanceOf(RuntimeStoppedError);
    expect(running.error).toBeInstanceOf(RuntimeStoppedError);
    expect(next.error).not.toBeInstanceOf(CancelledError);
    const results = memory.records().filter((r) => r.type === 'model_result') as ModelResultRecord[];
    expect(results.map((r) => r.error?.code)).toEqual(['runtime_stopped', 'runtime_stopped']);
  });
});

describe('observer hooks see a consistent snapshot', () => {
  test('in the admitted hook the snapshot counts equal its job list', async () => {
    const seen: Array<{ counts: number[]; phases: number[] }> = [];
    const holder: { runtime?: ModelRuntime } = {};
    const fixture = runtimeFixture(
      { maxConcurrency: 1, maxQueued: 2 },
      {
        observer: {
          admitted: () => {
            const s = holder.runtime!.schedulerSnapshot();
            const count = (phase: string) => s.jobs.filter((j) => j.phase === phase).length;
            seen.push({
              counts: [s.queued, s.preparing, s.executing, s.cleaning],
              phases: [count('Queued'), count('Preparing'), count('Executing'), count('Cleaning')],
            });
          },
        },
      },
    );
    holder.runtime = fixture.runtime;
    void fixture.runtime.complete(ask()); // gets the slot at once
    void fixture.runtime.complete(ask()); // waits
    await settle();
    expect(seen).toHaveLength(2);
    for (const { counts, phases } of seen) expect(counts).toEqual(phases);
  });
});
