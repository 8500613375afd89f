// The subjects of the scheduler bench and what is measured on them. Each subject runs in a
// worker of its own (bench/scheduler-worker.js), so that no subject's code shares type feedback
// with another's: in a process that uses one of them, the others are not loaded either.
import pLimit from 'p-limit';
import PQueue from 'p-queue';
import { PerformanceObserver } from 'node:perf_hooks';
import { closedLoop } from './lib.js';
import {
  CallIdGenerator,
  EchoProvider,
  MemoryJournal,
  ModelRuntime,
  Scheduler,
  systemClock,
} from '../packages/runtime/dist/index.js';
// The scheduler core's internals, reached directly: they are not part of the runtime's public face.
import { Job } from '../packages/runtime/dist/scheduler/job.js';
import { keepShape } from '../packages/runtime/dist/keep-shape.js';

const request = { messages: [{ role: 'user', content: 'ping' }] };
const idle = new AbortController().signal;

/** The runtime with an in-memory journal that keeps the last `maxRecords` records. */
function ours(maxQueued, maxRecords = 4_096, clock = systemClock) {
  const journal = new MemoryJournal({ maxRecords, whenFull: 'evict' });
  const runtime = new ModelRuntime({
    provider: new EchoProvider(),
    journal,
    clock,
    scheduler: { maxConcurrency: 4, maxQueued, maxInflight: maxQueued + 4 },
  });
  return {
    call: () => runtime.complete(request),
    reset: () => journal.clear(),
  };
}

/** One no-op call through the scheduler alone, told by its hooks when to run. */
class CoreJob extends Job {
  constructor(callId, provider, scheduler, resolve, reject) {
    super(callId, 'bench', undefined, 'complete', request);
    this.provider = provider;
    this.scheduler = scheduler;
    this.resolve = resolve;
    this.reject = reject;
  }

  granted(now) {
    this.scheduler.startExecuting(this, now);
    this.provider.complete(request, this).then((answer) => {
      this.scheduler.releaseSlot(this);
      this.scheduler.finish(this);
      this.resolve(answer);
    }, this.reject);
  }

  left(reason) {
    this.scheduler.finish(this);
    this.reject(reason);
  }
}

// Like the runtime's own classes, kept so that V8 keeps its hidden classes between rounds (keepShape).
keepShape(new CoreJob('', undefined, undefined, undefined, undefined));

/** The scheduler core alone: admission with size check, FIFO slots, deadline timers, phases. */
function schedulerCore(maxQueued) {
  const provider = new EchoProvider();
  const scheduler = new Scheduler({ maxConcurrency: 4, maxQueued, maxInflight: maxQueued + 4 });
  const ids = new CallIdGenerator();
  return {
    call: () =>
      new Promise((resolve, reject) => {
        scheduler.admit(new CoreJob(ids.next(), provider, scheduler, resolve, reject));
      }),
    reset() {},
  };
}

function viaPLimit() {
  const provider = new EchoProvider();
  const limit = pLimit(4);
  return {
    call: () => limit(() => provider.complete(request, { signal: idle, timeoutMs: 600_000 })),
    reset() {},
  };
}

/**
 * The least a promise-returning limiter does: a promise per call and a node in a FIFO, four
 * at a time — no size check, no deadline, no record, no id. What depth costs it, it costs any
 * limiter whose callers hold promises.
 */
function barePromiseFifo() {
  const provider = new EchoProvider();
  let running = 0;
  let head;
  let tail;
  const start = (waiter) => {
    running++;
    provider.complete(request, { signal: idle, timeoutMs: 600_000 }).then((answer) => {
      running--;
      const next = head;
      if (next) {
        head = next.next;
        if (head === undefined) tail = undefined;
        start(next);
      }
      waiter.resolve(answer);
    });
  };
  return {
    call: () =>
      new Promise((resolve) => {
        const waiter = { resolve, next: undefined };
        if (running < 4) start(waiter);
        else {
          if (tail) tail.next = waiter;
          else head = waiter;
          tail = waiter;
        }
      }),
    reset() {},
  };
}

/** The provider call alone, with no limit: the floor every subject's figure includes. */
function providerAlone() {
  const provider = new EchoProvider();
  return { call: () => provider.complete(request, { signal: idle, timeoutMs: 600_000 }), reset() {} };
}

function viaPQueue() {
  const provider = new EchoProvider();
  const queue = new PQueue({ concurrency: 4 });
  return {
    call: () => queue.add(() => provider.complete(request, { signal: idle, timeoutMs: 600_000 })),
    reset() {},
  };
}

/** `Promise.withResolvers`, which Node 20 lacks. */
function withResolvers() {
  let resolve;
  const promise = new Promise((settle) => (resolve = settle));
  return { promise, resolve };
}

/**
 * Bursts of `depth` calls admitted at once, each worked through before the next, until `total`
 * calls ran. Returns the rate of the synchronous admissions and the rate of the drains — from
 * a burst's last admission to its last result, while its backlog goes from `depth` to zero —
 * in calls per second. The same method at two depths shows what depth alone costs.
 */
async function bursts(depth, total, subject) {
  let admitting = 0;
  let draining = 0;
  const gcPauses = watchGcPauses();
  for (let done = 0; done < total; done += depth) {
    // Each result is taken and dropped, as a caller would: none is kept until the burst ends.
    const { promise: drained, resolve } = withResolvers();
    let remaining = depth;
    const taken = () => {
      if (--remaining === 0) resolve();
    };
    const start = performance.now();
    for (let i = 0; i < depth; i++) subject.call().then(taken);
    const admitted = performance.now();
    await drained;
    admitting += admitted - start;
    draining += performance.now() - admitted;
  }
  const calls = Math.ceil(total / depth) * depth;
  const gcMs = await gcPauses.stop();
  return {
    admitRate: calls / (admitting / 1000),
    drainRate: calls / (draining / 1000),
    outsideGcRate: calls / ((admitting + draining - gcMs) / 1000),
    gcShare: gcMs / (admitting + draining),
  };
}

/**
 * Watches the collector's pauses as V8 reports them (scavenges, mark-compact, incremental
 * steps); `stop` ends the watch and returns the milliseconds they took.
 */
function watchGcPauses() {
  let ms = 0;
  const observer = new PerformanceObserver((list) => {
    for (const pause of list.getEntries()) ms += pause.duration;
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    async stop() {
      await new Promise((resolve) => setTimeout(resolve, 0)); // let the last pauses be reported
      for (const pause of observer.takeRecords()) ms += pause.duration;
      observer.disconnect();
      return ms;
    },
  };
}

/**
 * Admission and cancellation of one streamed call at the tail of a wait queue `depth` deep
 * (4 calls hold the slots and never finish): synchronous work on the queue itself, so its
 * per-call cost shows whether the queue is O(1). Calls per second.
 */
function admitAndCancelAtDepth(depth, ops) {
  const journal = new MemoryJournal({ maxRecords: 4_096, whenFull: 'evict' });
  const runtime = new ModelRuntime({
    provider: new EchoProvider({ latencyMs: 2 ** 31 - 1 }),
    journal,
    scheduler: { maxConcurrency: 4, maxQueued: depth + 1, maxInflight: depth + 5 },
  });
  const held = Array.from({ length: depth + 4 }, () => runtime.stream(request));
  const start = performance.now();
  for (let i = 0; i < ops; i++) runtime.stream(request).cancel();
  const rate = ops / ((performance.now() - start) / 1000);
  for (const stream of held) stream.cancel();
  return rate;
}

/**
 * Heap bytes each waiting call holds: `depth` calls admitted behind 4 running ones, measured
 * after a full collection against the heap before, then worked through.
 */
async function queuedFootprint(make, depth) {
  const subject = make(depth);
  const pending = new Array(depth + 4).fill(undefined);
  globalThis.gc?.();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < pending.length; i++) pending[i] = subject.call();
  globalThis.gc?.();
  const bytes = (process.memoryUsage().heapUsed - before) / pending.length;
  await Promise.all(pending);
  return bytes;
}

/**
 * A clock whose reads cost nothing: a counter that moves on a microsecond a read, with the real
 * timers. Diagnostic only — its deadlines are not real time; the run ends long before any fires.
 */
function counterClock() {
  let now = 0;
  return clockReading(() => (now += 0.001));
}

/** The system clock's timers with `now` read from elsewhere. */
function clockReading(now) {
  return { ...systemClock, now };
}

/**
 * What the runtime's clock costs a call: the clock reads it makes per call (counted on a
 * runtime of its own) and what one read of the system clock takes here, in ns.
 */
async function clockCost(calls) {
  let reads = 0;
  const counting = clockReading(() => (reads++, systemClock.now()));
  const subject = ours(32, 4_096, counting);
  await closedLoop(calls, 36, subject.call);
  const readsPerCall = reads / calls;
  const now = systemClock.now;
  const start = performance.now();
  for (let i = 0; i < calls; i++) now();
  return { readsPerCall, nsPerRead: ((performance.now() - start) * 1e6) / calls };
}

/** The subjects by key: each makes a caller for a wait queue of `maxQueued`. */
export const makers = {
  sluice: ours,
  // The journal keeps the records of the calls in flight only (two each): what retaining 4,096
  // records costs the collector, the difference to the runtime's own row shows.
  sluiceInflightRing: (maxQueued) => ours(maxQueued, 2 * (maxQueued + 4)),
  // The same runtime on a clock that costs nothing to read: what the machine's clock costs it.
  sluiceFreeClock: (maxQueued) => ours(maxQueued, 4_096, counterClock()),
  core: schedulerCore,
  plimit: viaPLimit,
  pqueue: viaPQueue,
  bare: barePromiseFifo,
  alone: providerAlone,
};

/**
 * One subject, built once in its worker with a bounded queue (32) and a deep one (`deep`), and
 * the measurements the bench asks of it. Only the runtime measures its queue alone
 * (`admitAndCancel`).
 */
export function subjectFor(key, deep) {
  const make = makers[key];
  const bounded = make(32);
  const deepSubject = make(deep);
  return {
    bounded(calls) {
      bounded.reset();
      return closedLoop(calls, 36, bounded.call);
    },
    sustained() {
      deepSubject.reset();
      return closedLoop(deep * 3, deep, deepSubject.call);
    },
    bursts(depth) {
      return depth === 36 ? bursts(36, deep, bounded) : bursts(depth, deep, make(depth));
    },
    footprint() {
      return queuedFootprint(make, deep);
    },
    ...(key === 'sluice' && { admitAndCancel: admitAndCancelAtDepth, clockCost }),
  };
}
