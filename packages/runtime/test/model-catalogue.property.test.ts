import fc from 'fast-check';
import { expect, test } from 'vitest';
import { ModelCatalogue } from '../src/catalogue/model-catalogue.js';
import { ModelRuntime } from '../src/gateway/model-runtime.js';
import { MemoryJournal } from '../src/journal/memory-journal.js';
import { EchoProvider } from '../src/providers/echo-provider.js';
import { FakeClock } from '../src/testing/index.js';
import { settle } from './helpers/scripted-provider.js';

// Issue 29: each model of a catalogue has its own slots. Whatever another model's calls do —
// fill its slots and queue, be refused, run long — a model's calls are admitted, queued, refused
// and answered exactly as they would be on a daemon serving that model alone.

type Op = { op: 'a' } | { op: 'b' } | { op: 'advance'; ms: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('a' as const) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('b' as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 400 }) }),
  },
);
const limitsArb = fc.record({
  maxConcurrency: fc.integer({ min: 1, max: 3 }),
  maxQueued: fc.integer({ min: 0, max: 3 }),
});

const request = { messages: [{ role: 'user' as const, content: 'hi' }] };

function runtime(clock: FakeClock, journal: MemoryJournal, latencyMs: number, limits: object): ModelRuntime {
  return new ModelRuntime({
    provider: new EchoProvider({ clock, latencyMs }),
    journal,
    clock,
    scheduler: { ...limits, maxInflight: 64 },
    wallClockMs: () => 0,
  });
}

/** What a model's call came to: refused at admission (its code), or its answer or failure. */
function call(models: ModelCatalogue, name: string, outcomes: string[]): void {
  try {
    models.complete(name, request).then(
      () => outcomes.push('answered'),
      (error: { code: string }) => outcomes.push(error.code),
    );
  } catch (error) {
    outcomes.push(`refused ${(error as { code: string }).code}`);
  }
}

test("a model's calls go as if it were served alone, whatever the other model's calls do", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(opArb, { maxLength: 40 }),
      limitsArb,
      limitsArb,
      async (ops, limitsA, limitsB) => {
        const clock = new FakeClock();
        const aloneClock = new FakeClock();
        const journal = new MemoryJournal();
        const both = new ModelCatalogue([
          { name: 'a', runtime: runtime(clock, journal, 1_000, limitsA) },
          { name: 'b', runtime: runtime(clock, journal, 100, limitsB) },
        ]);
        const alone = new ModelCatalogue([
          { name: 'b', runtime: runtime(aloneClock, new MemoryJournal(), 100, limitsB) },
        ]);
        const seen: string[] = [];
        const expected: string[] = [];
        const other: string[] = [];
        for (const step of ops) {
          if (step.op === 'a') call(both, 'a', other);
          else if (step.op === 'b') {
            call(both, 'b', seen);
            call(alone, 'b', expected);
          } else {
            clock.advance(step.ms);
            aloneClock.advance(step.ms);
          }
          await settle();
          const b = both.get('b').runtime.schedulerSnapshot();
          const lone = alone.get('b').runtime.schedulerSnapshot();
          expect([b.executing, b.queued]).toEqual([lone.executing, lone.queued]);
          expect(seen).toEqual(expected);
        }
        await both.shutdown({ abortRunning: true });
        await alone.shutdown({ abortRunning: true });
      },
    ),
    { numRuns: 200 },
  );
});
