import { CancelledError, type ModelRuntimeError } from '../errors.js';
import type { CapacityPort } from '../scheduler/capacity-port.js';
import type { Job } from '../scheduler/job.js';
import type { Scheduler, SchedulerOptions } from '../scheduler/scheduler.js';
import { SharedScheduler } from '../scheduler/shared-scheduler.js';
import type { GenerationRequest, ModelResponse } from '../types.js';
import type { Call } from './call.js';
import type { CallOptions, ModelStream } from './model-gateway.js';
import { ModelRuntime, type ModelRuntimeOptions } from './model-runtime.js';
import { StreamChannel } from './stream-channel.js';

/** How a {@link SharedModelRuntime} is put together: a runtime's options plus its capacity port. */
export interface SharedModelRuntimeOptions extends ModelRuntimeOptions {
  /** Where the limits are held, shared with other daemons (a fleet backend); closed on shutdown. */
  capacity: CapacityPort<Job>;
}

const NO_OPTIONS: CallOptions = Object.freeze({});
const noop = (): void => undefined;

/**
 * A {@link ModelRuntime} whose limits are shared with other daemons through a capacity port
 * (issue 21; docs/fleet.md). Local checks — timeout, request size, budget — still throw
 * synchronously; the fleet's answer takes one round trip: an admitted call then runs as any
 * other, a refused one rejects its promise (or ends its stream before any event) with the typed
 * `OverloadedError`, with nothing recorded. The limits configured are the whole fleet's, per
 * provider and configured model ({@link pool}).
 */
export class SharedModelRuntime extends ModelRuntime {
  /**
   * The fleet pool this runtime's calls count against: its provider and configured model. A
   * call naming another model counts here too — as with the in-process scheduler, whose limits
   * cover every call of the runtime — so a client cannot open pools (and limits) by naming models.
   */
  readonly pool: string;

  constructor(options: SharedModelRuntimeOptions) {
    if (!options.capacity) throw new TypeError('capacity is required');
    super(options);
    this.pool = `${this.providerName}/${this.provider.defaultModel}`;
  }

  protected override createScheduler(
    options: SchedulerOptions,
    runtimeOptions: ModelRuntimeOptions,
  ): Scheduler {
    return new SharedScheduler({
      ...options,
      capacity: (runtimeOptions as SharedModelRuntimeOptions).capacity,
    });
  }

  private get shared(): SharedScheduler {
    return this.scheduler as SharedScheduler;
  }

  override complete(request: GenerationRequest, options: CallOptions = NO_OPTIONS): Promise<ModelResponse> {
    return this.completeCall(request, options).answer;
  }

  override completeCall(
    request: GenerationRequest,
    options: CallOptions = NO_OPTIONS,
  ): { callId: string; answer: Promise<ModelResponse> } {
    const { call, admitted } = this.admitShared(request, options, undefined);
    const answer = new Promise<ModelResponse>((resolve, reject) => call.settleWith(resolve, reject));
    admitted.then(
      (now) => now && this.writeRequest(call),
      (error: ModelRuntimeError) => call.deliver(undefined, error),
    );
    return { callId: call.callId, answer };
  }

  override stream(request: GenerationRequest, options: CallOptions = NO_OPTIONS): ModelStream {
    const channel = new StreamChannel();
    const { call, admitted } = this.admitShared(request, options, channel);
    admitted.then(
      (now) => now && this.writeRequest(call),
      (error: ModelRuntimeError) => call.deliver(undefined, error),
    );
    // A cancel before the fleet answered applies once the call is admitted.
    const abort = (reason: ModelRuntimeError): void => {
      if (call.admitted) this.scheduler.abort(call, reason);
      else admitted.then(() => this.scheduler.abort(call, reason), noop);
    };
    return {
      callId: call.callId,
      cancel: () => abort(new CancelledError('host')),
      [Symbol.asyncIterator]: () => ({
        next: () => channel.next(),
        return: () => {
          if (channel.close()) abort(new CancelledError('consumer_gone'));
          return Promise.resolve({ value: undefined, done: true });
        },
      }),
    };
  }

  /** Drains as any runtime, then lets go of the capacity port. */
  override async shutdown(options: { abortRunning?: boolean } = {}): Promise<void> {
    await super.shutdown(options);
    await this.shared.closeCapacity();
  }

  /**
   * Builds the call and runs the shared admission: what fails locally throws now; `admitted`
   * settles with the fleet's answer — false when the call waits for room (`waitForCapacity`;
   * it then starts from the scheduler's `entered`). A host signal aborted meanwhile cancels it.
   */
  private admitShared(
    request: GenerationRequest,
    options: CallOptions,
    channel: StreamChannel | undefined,
  ): { call: Call; admitted: Promise<boolean> } {
    const signal = options.signal;
    const now = this.clock.now();
    const { call, budget } = this.newCall(request, options, channel, now);
    const admitted = this.shared
      .admitShared(
        call,
        this.pool,
        options.timeoutMs,
        budget?.remainingActivityMs(),
        options.waitForCapacity === true,
      )
      .then((now) => {
        if (now) budget?.begin(call.admittedAt);
        if (signal !== undefined) {
          if (signal.aborted) this.scheduler.abort(call, new CancelledError('host'));
          else call.attach(signal, () => this.scheduler.abort(call, new CancelledError('host')));
        }
        return now;
      });
    return { call, admitted };
  }
}
