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

/** Which capacity of the scheduler was full when a call was refused. */
export type OverloadCapacity = 'QueueFull' | 'InflightFull';

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
  preparing: number;
  executing: number;
  cleaning: number;
  limits: ModelLimits;
  jobs: ModelJobReport[];
}
