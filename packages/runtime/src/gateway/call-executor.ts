import type { Clock } from '../clock.js';
import { costMicroOf, type Pricing } from '../budget/pricing.js';
import { ModelClosureFailure, ModelRuntimeError, ProviderError, RecordingError } from '../errors.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { ModelProvider } from '../types.js';
import type { Call, CallDriver, Outcome } from './call.js';
import type { CallRecorder } from './call-recorder.js';
import { pumpStream } from './stream-pump.js';

/**
 * Carries an admitted call from its slot to its delivery (SCH-5, SCH-8, SCH-9, SCH-15, SCH-16):
 * starts the provider once the slot is held and the request record confirmed, releases the slot
 * when the provider is done, records the result, settles the budget, frees the in-flight unit,
 * then delivers. The scheduler and the journal call back into it as the call progresses.
 */
export class CallExecutor implements CallDriver {
  constructor(
    private readonly scheduler: Scheduler,
    private readonly provider: ModelProvider,
    private readonly recorder: CallRecorder,
    private readonly clock: Clock,
    private readonly pricing: Pricing | undefined,
    /** Starts the budget and the request record of a call admitted after waiting for room. */
    private readonly start: (call: Call, now: number) => void,
  ) {}

  entered(call: Call, now: number): void {
    this.start(call, now);
  }

  /** Nothing was admitted, recorded or charged: the caller gets the refusal's `reason`. */
  turnedAway(call: Call, reason: ModelRuntimeError): void {
    call.execution = 'done';
    call.failure = reason;
    call.detach();
    call.deliver(undefined, reason);
  }

  /** Counts the options `call` records (SCH-17). */
  optionsBytes(call: Call, timeoutMs: number): number {
    return this.recorder.optionsBytes(call, timeoutMs);
  }

  /**
   * The slot is held. The provider starts once the request record is confirmed
   * (SCH-9) and not after an abort; execution ends when the provider answers or the job is
   * aborted, whichever comes first (SCH-8). Event-driven, so a call costs few promises.
   */
  run(call: Call, now?: number): void {
    if (!call.requestSettled) return; // starts once the request record settles
    if (call.requestEvidence)
      return this.endExecution(call, undefined, new RecordingError(call.requestEvidence));
    if (call.abortReason) return this.endExecution(call, undefined, call.abortReason);
    this.scheduler.startExecuting(call, now ?? this.clock.now());
    call.execution = 'running';
    let answer: Promise<Outcome>;
    try {
      answer = call.channel
        ? pumpStream(this.provider, call, call.channel)
        : this.provider.complete(call.request, call);
    } catch (error) {
      answer = Promise.reject(error);
    }
    answer.then(
      (outcome) => this.endExecution(call, outcome, undefined),
      (error: unknown) => this.endExecution(call, undefined, this.classify(error, call)),
    );
  }

  /**
   * Execution is over (or never started): release the slot at once (SCH-5) and
   * record the result once the request record has settled (SCH-15).
   */
  endExecution(call: Call, outcome: Outcome | undefined, failure: ModelRuntimeError | undefined): void {
    if (call.execution === 'done') return;
    call.execution = 'done';
    call.outcome = outcome;
    call.failure = failure && call.abortReason ? call.abortReason : failure;
    const now = this.clock.now();
    this.scheduler.releaseSlot(call, now);
    call.detach();
    if (call.requestSettled) this.recordResult(call, now); // else once the request record settles
  }

  /** The request record is confirmed, or failed with `error`. */
  requestAppended(call: Call, error: Error | undefined): void {
    call.pendingAppends--;
    // What waited for this record: an execution that ended (its result is recorded next) or a
    // granted slot (the provider may start). A queued call waits for its slot instead.
    const ended = call.execution === 'done';
    const granted = !ended && call.phase === 'Preparing';
    if (error) {
      call.requestEvidence = this.recorder.evidence(call, 'model_request', error);
      // A queued job leaves the queue at once and settles; the provider never starts (SCH-15).
      this.scheduler.abort(call, new RecordingError(call.requestEvidence));
    } else call.requestRecorded = true;
    if (ended) this.recordResult(call, this.clock.now());
    else if (granted) this.run(call);
  }

  /** The result record is confirmed, or failed with `error`: the call settles. */
  resultAppended(call: Call, error: Error | undefined): void {
    call.pendingAppends--;
    const { failure } = call;
    if (error) {
      const evidence = this.recorder.evidence(call, 'model_result', error);
      return this.settle(
        call,
        new ModelClosureFailure(evidence, failure?.code ?? 'success', { cause: failure }),
      );
    }
    call.resultRecorded = true;
    this.settle(call, failure);
  }

  /** Records the result at `now`, then settles; success is delivered only once it is confirmed (SCH-16). */
  private recordResult(call: Call, now: number): void {
    const { failure } = call;
    if (call.requestEvidence) {
      const error =
        failure instanceof RecordingError
          ? failure
          : new RecordingError(call.requestEvidence, { cause: failure });
      return this.settle(call, error);
    }
    this.recorder.writeResult(call, now);
  }

  /** Settles the budget, frees the in-flight unit, then delivers. */
  private settle(call: Call, error: ModelRuntimeError | undefined): void {
    const { outcome } = call;
    call.failure = error; // the call's stop reason, with the outcome's
    call.budget?.settle(outcome?.usage, costMicroOf(outcome?.usage, this.pricing));
    this.scheduler.finish(call);
    call.deliver(error ? undefined : outcome, error);
  }

  private classify(error: unknown, call: Call): ModelRuntimeError {
    if (call.abortReason) return call.abortReason;
    if (error instanceof ModelRuntimeError) return error;
    const message = error instanceof Error ? error.message : String(error);
    return new ProviderError(
      `Provider "${this.provider.name}" failed: ${message.slice(0, 500)}`,
      false,
      undefined,
      {
        cause: error,
      },
    );
  }
}
