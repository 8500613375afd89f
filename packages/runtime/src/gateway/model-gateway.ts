import type { ModelSchedulerSnapshot } from '@sluice/protocol';
import type { TaskBudget } from '../budget/task-budget.js';
import type { GenerationRequest, ModelResponse, ModelStreamEvent } from '../types.js';

/** Per-call options of {@link ModelGateway.complete} and {@link ModelGateway.stream}. */
export interface CallOptions {
  /** Timeout in ms; inherits the runtime default when absent and can only tighten it (SCH-6). */
  timeoutMs?: number;
  /** Host cancellation. */
  signal?: AbortSignal;
  /** The task's budget, shared across its turns; a bounded temporary one when absent (SCH-2). */
  budget?: TaskBudget;
  sessionId?: string;
  turnId?: string;
  /** Model name; the provider's default when absent. */
  model?: string;
  /**
   * The call is made for an accepted prompt: when the scheduler has no room it waits among the
   * runtime's bounded waiters, in arrival order, within its deadline, instead of being refused
   * with `model_overloaded` (docs/decisions/029). A refusal stands when the waiters are full.
   */
  waitForCapacity?: boolean;
  /**
   * This call is a fallback attempt of the client's call `fallbackOf` (its first attempt's call
   * id): its request record says so, linking the attempts in the journal.
   */
  fallbackOf?: string;
}

/**
 * What hosts program against: any runtime can generate; only a scheduled runtime has a
 * snapshot, and one without returns `undefined`, never "all zero" (SCH-10).
 */
export interface ModelGateway {
  complete(request: GenerationRequest, options?: CallOptions): Promise<ModelResponse>;
  stream(request: GenerationRequest, options?: CallOptions): ModelStream;
  schedulerSnapshot(): ModelSchedulerSnapshot | undefined;
  shutdown(): Promise<void>;
}

/** A streamed call: iterate it for deltas and one final `finished`; `break` cancels the call. */
export interface ModelStream extends AsyncIterable<ModelStreamEvent> {
  readonly callId: string;
  /** Cancels the call as the host; iteration then ends with `CancelledError`. */
  cancel(): void;
}
