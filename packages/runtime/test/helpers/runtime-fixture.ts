import { FaultInjectingJournal } from '../../src/testing/fault-journal.js';
import { MemoryJournal } from '../../src/journal/memory-journal.js';
import { ModelRuntime, type ModelRuntimeOptions } from '../../src/gateway/model-runtime.js';
import type { SchedulerConfig } from '../../src/scheduler/config.js';
import type { GenerationRequest } from '../../src/types.js';
import { FakeClock } from '../../src/testing/index.js';
import { ScriptedProvider } from './scripted-provider.js';

/** A runtime on a fake clock with a scripted provider and a fault-injectable memory journal. */
export function runtimeFixture(scheduler: SchedulerConfig = {}, extra: Partial<ModelRuntimeOptions> = {}) {
  const clock = new FakeClock();
  const provider = new ScriptedProvider();
  const memory = new MemoryJournal();
  const journal = new FaultInjectingJournal(memory);
  const runtime = new ModelRuntime({ provider, journal, clock, scheduler, ...extra });
  return { clock, provider, memory, journal, runtime };
}

/** A one-message request. */
export function ask(text = 'hello'): GenerationRequest {
  return { messages: [{ role: 'user', content: text }] };
}

/** Tracks a promise's state without awaiting it. */
export function track<T>(promise: Promise<T>) {
  const state: { status: 'pending' | 'resolved' | 'rejected'; value?: T; error?: unknown } = {
    status: 'pending',
  };
  promise.then(
    (value) => Object.assign(state, { status: 'resolved', value }),
    (error: unknown) => Object.assign(state, { status: 'rejected', error }),
  );
  return state;
}
