import { registerAgentGauges } from './agent-gauges.js';
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type LabelValues,
  type MetricObjectWithValues,
  type MetricType,
  type MetricValueWithName,
} from 'prom-client';
import type { ModelSchedulerSnapshot, TotalSlotsReport } from '@sluice/protocol';
import type { Distribution } from './distribution.js';
import type { LabeledCounts } from './labeled-counts.js';
import { sessionLoads, type ObservedDaemon } from './observed-daemon.js';

// Loaded with `import()` on the first scrape (see routes/metrics.ts), so that prom-client costs
// a daemon nothing until someone asks for metrics (docs/decisions/009).

/** Sessions `sluice_session_pending_prompts` names: the ones with the most pending prompts. */
export const TOP_SESSIONS = 10;

type Series = Array<{ labels: LabelValues<string>; value: number }>;
type Read = () => number | Series;

/** One metric as the registry declares it: what docs/reference/metrics.md lists. */
export interface MetricDeclaration {
  readonly name: string;
  readonly type: string;
  readonly help: string;
  readonly labelNames: readonly string[];
}

/** What `GET /metrics` answers. */
export interface MetricsRegistry {
  readonly contentType: string;
  /** The scrape, in the Prometheus text format. */
  metrics(): Promise<string>;
  /** Every metric the daemon declares (prom-client's process defaults left out), in order. */
  declarations(): MetricDeclaration[];
}

/** The registry's own metrics, without prom-client's `process_*` and `nodejs_*` defaults. */
function sluiceDeclarations(registry: Registry): MetricDeclaration[] {
  return registry
    .getMetricsAsArray()
    .filter((metric) => metric.name.startsWith('sluice_'))
    .map((metric) => {
      const { name, help, labelNames, type } = metric as unknown as MetricDeclaration;
      return { name, type, help, labelNames: [...labelNames] };
    });
}

/** Sets a counter or gauge to what `read` says now (they are kept elsewhere, not here). */
function fill(metric: Counter | Gauge, read: Read): void {
  metric.reset();
  const value = read();
  if (typeof value === 'number') {
    if (metric instanceof Gauge) metric.set(value);
    else metric.inc(value);
    return;
  }
  for (const series of value) {
    if (metric instanceof Gauge) metric.set(series.labels, series.value);
    else metric.inc(series.labels, series.value);
  }
}

/** prom-client's typings declare `MetricType` a numeric enum; at run time a metric's type is its name. */
const HISTOGRAM_TYPE = 'histogram' as unknown as MetricType;

/** A histogram whose buckets are a {@link Distribution}'s, read at scrape time. */
class DistributionHistogram extends Histogram {
  constructor(
    registry: Registry,
    private readonly metricName: string,
    private readonly metricHelp: string,
    private readonly source: Distribution,
  ) {
    super({ name: metricName, help: metricHelp, buckets: [...source.bounds], registers: [registry] });
  }

  override async get(): Promise<MetricObjectWithValues<MetricValueWithName<string>>> {
    return this.exported();
  }

  /** What the registry formats: prom-client calls it instead of `get` when a metric has it. */
  async getForPromString(): Promise<MetricObjectWithValues<MetricValueWithName<string>>> {
    return this.exported();
  }

  private exported(): MetricObjectWithValues<MetricValueWithName<string>> {
    const { bounds, count, sum } = this.source;
    const cumulative = this.source.cumulative();
    const bucket = `${this.metricName}_bucket`;
    const values: Array<MetricValueWithName<string>> = bounds.map((bound, index) => ({
      metricName: bucket,
      labels: { le: bound },
      value: cumulative[index]!,
    }));
    values.push({ metricName: bucket, labels: { le: '+Inf' }, value: count });
    values.push({ metricName: `${this.metricName}_sum`, labels: {}, value: sum });
    values.push({ metricName: `${this.metricName}_count`, labels: {}, value: count });
    return {
      name: this.metricName,
      help: this.metricHelp,
      type: HISTOGRAM_TYPE,
      aggregator: 'sum',
      collect: () => undefined,
      values,
    };
  }
}

const labeled = (counts: LabeledCounts): Series => counts.entries();

/**
 * The registry of a daemon's metrics (docs/reference/metrics.md): the tap's counters and distributions and
 * the live state its API reports, read at every scrape, plus prom-client's process defaults.
 */
export function createMetricsRegistry(source: ObservedDaemon): MetricsRegistry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metric = (
    kind: 'counter' | 'gauge',
    name: string,
    help: string,
    labelNames: string[],
    read: Read,
  ) => {
    const options = {
      name,
      help,
      labelNames,
      registers: [registry],
      collect(this: Counter | Gauge) {
        fill(this, read);
      },
    };
    if (kind === 'counter') new Counter(options);
    else new Gauge(options);
  };
  registerCounters(source, (name, help, labels, read) => metric('counter', name, help, labels, read));
  registerGauges(source, (name, help, labels, read) => metric('gauge', name, help, labels, read));
  const { model, journal } = source.tap;
  const histogram = (name: string, help: string, distribution: Distribution): void => {
    new DistributionHistogram(registry, name, help, distribution);
  };
  histogram(
    'sluice_model_queue_wait_seconds',
    'Time finished model calls waited for a slot.',
    model.queueWait,
  );
  histogram(
    'sluice_model_recording_seconds',
    'Time finished model calls held a slot until their request record was confirmed.',
    model.recording,
  );
  histogram(
    'sluice_model_execution_seconds',
    'Time finished model calls spent in the provider.',
    model.execution,
  );
  histogram(
    'sluice_model_cleaning_seconds',
    'Time from a model call releasing its slot to its result recorded and the call freed.',
    model.cleaning,
  );
  histogram(
    'sluice_journal_commit_duration_seconds',
    'Time from handing a batch to the journal writer to its commit.',
    journal.commitSeconds,
  );
  histogram(
    'sluice_journal_batch_records',
    'Records per committed journal transaction.',
    journal.batchRecords,
  );
  return {
    contentType: registry.contentType,
    metrics: () => registry.metrics(),
    declarations: () => sluiceDeclarations(registry),
  };
}

type Define = (name: string, help: string, labelNames: string[], read: Read) => void;

function registerCounters(source: ObservedDaemon, counter: Define): void {
  const { prompts, model } = source.tap;
  const streams = source.bridge.streams;
  counter('sluice_prompts_admitted_total', 'Prompts admitted.', [], () => prompts.admittedPrompts);
  counter('sluice_prompts_refused_total', 'Prompts refused at admission, by error code.', ['code'], () =>
    labeled(prompts.refusals),
  );
  counter(
    'sluice_turns_total',
    'Prompts that ended, by outcome (completed, cancelled, failed) and stop reason or error code.',
    ['outcome', 'code'],
    () => labeled(prompts.turns),
  );
  counter(
    'sluice_model_calls_total',
    'Model calls by outcome (completed, cancelled, failed, refused) and stop reason or error code.',
    ['outcome', 'code'],
    () => labeled(model.calls),
  );
  counter(
    'sluice_catalogue_model_refusals_total',
    "Model calls refused at admission, by the catalogue's model.",
    ['model'],
    () => labeled(model.refusalsByModel),
  );
  counter('sluice_model_tokens_total', 'Tokens charged to task budgets, by direction.', ['direction'], () => [
    { labels: { direction: 'input' }, value: model.inputTokens },
    { labels: { direction: 'output' }, value: model.outputTokens },
  ]);
  counter(
    'sluice_http_rate_limited_total',
    'HTTP requests refused by --rate-limit (429 rate_limit_exceeded), by tier.',
    ['tier'],
    () => labeled(source.tap.rateLimited),
  );
  counter(
    'sluice_sse_evictions_total',
    'Event-stream subscribers evicted for a full queue (client_evicted).',
    [],
    () => streams.evictedSubscribers,
  );
}

/** The scheduler's gauges: what `/runtime/snapshot` reports, counts against their limits. */
const SCHEDULER_GAUGES: ReadonlyArray<[string, string, (s: ModelSchedulerSnapshot) => number]> = [
  ['sluice_model_calls_queued', 'Model calls waiting for a slot.', (s) => s.queued],
  [
    'sluice_model_calls_waiting',
    'Model calls of accepted prompts waiting for room in the queue or the in-flight cap.',
    (s) => s.waiting,
  ],
  [
    'sluice_model_calls_preparing',
    'Model calls holding a slot, recording their request.',
    (s) => s.preparing,
  ],
  ['sluice_model_calls_executing', 'Model calls in the provider.', (s) => s.executing],
  ['sluice_model_calls_cleaning', 'Model calls recording their result.', (s) => s.cleaning],
  ['sluice_model_calls_inflight', 'Model calls accepted and not yet cleaned up.', (s) => s.inflight],
  ['sluice_model_max_concurrency', 'Limit: model calls executing at once.', (s) => s.limits.maxConcurrency],
  ['sluice_model_max_queued', 'Limit: model calls waiting for a slot.', (s) => s.limits.maxQueued],
  ['sluice_model_max_inflight', 'Limit: model calls in flight.', (s) => s.limits.maxInflight],
  [
    'sluice_model_max_waiting',
    'Limit: model calls of accepted prompts waiting for room.',
    (s) => s.maxWaiting,
  ],
];

/** Each catalogue model's scheduler: its calls by state and its limits, `model` the catalogue's names. */
function registerModelGauges(source: ObservedDaemon, gauge: Define): void {
  const models = source.models;
  if (models === undefined) return;
  const snapshots = oncePerTurn(() => models.snapshots());
  const states = ['queued', 'waiting', 'preparing', 'executing', 'cleaning', 'inflight'] as const;
  gauge(
    'sluice_catalogue_model_calls',
    "Model calls of each catalogue model's scheduler, by state.",
    ['model', 'state'],
    () =>
      snapshots().flatMap(({ model, snapshot }) =>
        states.map((state) => ({ labels: { model, state }, value: snapshot[state] })),
      ),
  );
  // The daemon-wide cap over all models' slots: no sample without one (docs/decisions/037).
  const total = (read: (slots: TotalSlotsReport) => number) => (): Series => {
    const slots = snapshots()[0]?.snapshot.totalSlots;
    return slots === undefined ? [] : [{ labels: {}, value: read(slots) }];
  };
  gauge(
    'sluice_catalogue_slots_used',
    'Slots held by model calls of all catalogue models together, under --model-max-concurrency-total.',
    [],
    total((slots) => slots.used),
  );
  gauge(
    'sluice_catalogue_max_concurrency_total',
    'Limit: model calls of all catalogue models executing at once (--model-max-concurrency-total).',
    [],
    total((slots) => slots.limit),
  );
  const limits = ['maxConcurrency', 'maxQueued', 'maxInflight'] as const;
  gauge(
    'sluice_catalogue_model_limit',
    "Limits of each catalogue model's scheduler.",
    ['model', 'limit'],
    () =>
      snapshots().flatMap(({ model, snapshot }) =>
        limits.map((limit) => ({ labels: { model, limit }, value: snapshot.limits[limit] })),
      ),
  );
}

/** `read()` once per turn of the loop: a scrape collects every metric in one turn. */
function oncePerTurn<T>(read: () => T): () => T {
  let cached: { value: T } | undefined;
  return () => {
    if (cached !== undefined) return cached.value;
    cached = { value: read() };
    queueMicrotask(() => (cached = undefined));
    return cached.value;
  };
}

function registerGauges(source: ObservedDaemon, gauge: Define): void {
  const { bridge, runtime, tap } = source;
  const scheduler = oncePerTurn(() => runtime.schedulerSnapshot());
  for (const [name, help, read] of SCHEDULER_GAUGES) gauge(name, help, [], () => read(scheduler()));
  registerModelGauges(source, gauge);
  gauge('sluice_sessions', 'Open sessions.', [], () => bridge.listSessions().length);
  gauge(
    'sluice_pending_prompts',
    'Pending prompts (queued and running) over all sessions.',
    [],
    () => sessionLoads(bridge, 0).pendingPrompts,
  );
  gauge(
    'sluice_session_pending_prompts',
    `Pending prompts of the ${TOP_SESSIONS} sessions with the most (sessions with none are left out).`,
    ['session_id'],
    () =>
      sessionLoads(bridge, TOP_SESSIONS)
        .top.filter((load) => load.pendingPrompts > 0)
        .map((load) => ({ labels: { session_id: load.sessionId }, value: load.pendingPrompts })),
  );
  gauge(
    'sluice_sse_subscribers',
    'Event-stream subscribers connected.',
    [],
    () => bridge.streams.totalSubscriberCount,
  );
  gauge(
    'sluice_event_ring_bytes',
    'Bytes held by the sessions\u2019 event replay rings.',
    [],
    () => bridge.streams.memory.bytes,
  );
  gauge(
    'sluice_event_ring_bytes_limit',
    'Budget of the event replay rings, in bytes (-1 = unlimited).',
    [],
    () => {
      const limit = bridge.streams.memory.maxBytes;
      return Number.isFinite(limit) ? limit : -1;
    },
  );
  gauge(
    'sluice_agent_processes',
    'External agent processes running.',
    [],
    () => source.agentPool?.processCount ?? 0,
  );
  const agents = source.agentPool;
  registerAgentGauges(
    oncePerTurn(() => agents?.describe()),
    gauge,
  );
  gauge(
    'sluice_journal_interrupted_calls',
    'Model calls a killed daemon left open, recorded as interrupted at start-up (-1 until recovery ran).',
    [],
    () => tap.journal.interruptedCalls ?? -1,
  );
}
