/**
 * Stable codes of the model runtime's errors. They travel on the wire inside `turn_error`
 * events and error bodies, so a value here never changes meaning once released.
 */
export const MODEL_ERROR_CODES = [
  'model_overloaded',
  'request_too_large',
  'model_timeout',
  'model_queue_timeout',
  'invalid_timeout',
  'budget_exhausted',
  'model_cancelled',
  'runtime_stopped',
  'model_recording_failed',
  'model_closure_failure',
  'model_provider_error',
  // Recorded at start-up for a call whose daemon was killed before it ended; never re-run (SCH-15).
  'interrupted',
] as const;

/** One of {@link MODEL_ERROR_CODES}. */
export type ModelErrorCode = (typeof MODEL_ERROR_CODES)[number];

/** Why a model call stopped producing output (the ACP stop reasons a model can cause). */
export type ModelStopReason = 'end_turn' | 'max_tokens' | 'refusal' | 'cancelled';

/**
 * Which capacity of the scheduler was full when a call was refused. A fleet (shared limits)
 * adds `RateLimited` (a shared requests- or tokens-per-minute window is spent) and
 * `FleetUnavailable` (the shared store is unreachable and the daemon is set to refuse).
 */
export type OverloadCapacity = 'QueueFull' | 'InflightFull' | 'RateLimited' | 'FleetUnavailable';

/** The scheduler's limits as reported under `/capabilities` → `limits.model`. */
export interface ModelLimits {
  maxConcurrency: number;
  maxQueued: number;
  maxInflight: number;
  maxRequestBytes: number;
  defaultTimeoutMs: number;
}

/** Lifecycle phase of one accepted model call (SPEC SCH-10). */
export type ModelJobPhase = 'Queued' | 'Preparing' | 'Executing' | 'Cleaning';

/** One in-flight model call as the snapshot shows it; never carries prompt content (SCH-11). */
export interface ModelJobReport {
  callId: string;
  taskId: string;
  sessionId?: string;
  /** The prompt (turn) the call belongs to, when its caller named one. */
  turnId?: string;
  kind: 'complete' | 'stream';
  phase: ModelJobPhase;
  /** The original effective timeout fixed at admission, in ms. */
  timeoutMs: number;
  /** Time left until the absolute deadline (0 once passed). */
  remainingMs: number;
  /** Time spent in each phase so far, in ms. */
  phaseDurationsMs: Record<ModelJobPhase, number>;
  /** True while a journal append of this call is outstanding. */
  recording: boolean;
  requestRecorded: boolean;
  resultRecorded: boolean;
  stopReason?: string;
}

/** The scheduler's live state (SPEC SCH-11): counts plus the bounded list of in-flight jobs. */
export interface ModelSchedulerSnapshot {
  accepting: boolean;
  inflight: number;
  queued: number;
  /**
   * Calls of accepted prompts waiting, in arrival order, for room in the queue or the in-flight
   * cap; they hold no capacity and are not in `jobs` (docs/decisions/029).
   */
  waiting: number;
  /** The bound of `waiting`. */
  maxWaiting: number;
  preparing: number;
  executing: number;
  cleaning: number;
  limits: ModelLimits;
  jobs: ModelJobReport[];
  /** How the limits are shared with a fleet; absent on a single node. */
  fleet?: FleetCapacityReport;
  /**
   * The daemon-wide cap over all models' slots (`--model-max-concurrency-total`), shared by
   * every model's scheduler; absent when there is none (docs/decisions/037).
   */
  totalSlots?: TotalSlotsReport;
}

/** The daemon-wide cap on model calls executing at once, over all models of the catalogue. */
export interface TotalSlotsReport {
  /** Slots held now, by calls of any model. */
  used: number;
  /** The cap. */
  limit: number;
}

/**
 * A daemon's view of the fleet whose model limits it shares (`/runtime/snapshot` → `fleet`):
 * local knowledge only, so reading it never waits for the shared store.
 */
export interface FleetCapacityReport {
  backend: 'redis';
  fleetName: string;
  /** This daemon's id in the fleet: the owner of its leases. */
  nodeId: string;
  /**
   * `shared`: admission goes through the shared store; `local`: the store is unreachable and
   * this node applies its share of the limits; `refusing`: unreachable and calls are refused.
   */
  mode: 'shared' | 'local' | 'refusing';
  /** Whether the connection to the shared store is up. */
  connected: boolean;
  /** Nodes seen alive at the last renewal, this one included (at least 1). */
  nodes: number;
  /** A lease not renewed for this long is reclaimed by the other nodes. */
  leaseTtlMs: number;
  /** When the current outage began (ISO 8601); absent while connected. */
  outageSince?: string;
  /** The limits this node applies alone while in `local` mode. */
  localLimits?: Pick<ModelLimits, 'maxConcurrency' | 'maxQueued' | 'maxInflight'>;
}
