import {
  finishedCall,
  systemClock,
  type Clock,
  type ModelRuntimeError,
  type SchedulerObserver,
} from '@sluice/runtime';
import { Distribution, PHASE_SECONDS } from './distribution.js';
import { LabeledCounts } from './labeled-counts.js';
import { codeOf } from './prompt-tap.js';
import type { RecentRefusals } from './recent-refusals.js';

type FinishedJob = Parameters<NonNullable<SchedulerObserver['finished']>>[0];

/**
 * The model runtime's counters, told by the scheduler: calls by outcome and code, the time each
 * finished call spent in each phase, and the tokens its budget was charged (budget spend).
 */
export class ModelTap implements SchedulerObserver {
  /** Calls by outcome (`completed`, `cancelled`, `failed`, `refused`) and code (stop reason or error code). */
  readonly calls = new LabeledCounts(['outcome', 'code'], 64);
  /** Queued: from admission to a slot. */
  readonly queueWait = new Distribution(PHASE_SECONDS);
  /** Preparing: holding a slot until the request record was confirmed (SCH-9). */
  readonly recording = new Distribution(PHASE_SECONDS);
  /** Executing: the provider's time. */
  readonly execution = new Distribution(PHASE_SECONDS);
  /** Cleaning: from the slot's release to the result record confirmed and the call freed (SCH-16). */
  readonly cleaning = new Distribution(PHASE_SECONDS);
  /** Calls refused at admission, by the catalogue's model (bounded by the catalogue, then `other`). */
  readonly refusalsByModel = new LabeledCounts(['model'], 64);
  private tokensIn = 0;
  private tokensOut = 0;

  constructor(
    private readonly recent: RecentRefusals,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Input tokens charged to budgets since start. */
  get inputTokens(): number {
    return this.tokensIn;
  }

  /** Output tokens charged to budgets since start. */
  get outputTokens(): number {
    return this.tokensOut;
  }

  /** An observer of model `name`'s scheduler: counts its refusals under its name. */
  ofModel(name: string): SchedulerObserver {
    return { rejected: () => this.refusalsByModel.inc(name) };
  }

  rejected(error: ModelRuntimeError): void {
    const code = codeOf(error);
    this.calls.inc('refused', code);
    this.recent.add('model', code, undefined, () => error.message);
  }

  finished(job: FinishedJob): void {
    const phases = job.report(this.clock.now()).phaseDurationsMs;
    this.queueWait.observe(phases.Queued / 1000);
    this.recording.observe(phases.Preparing / 1000);
    this.execution.observe(phases.Executing / 1000);
    this.cleaning.observe(phases.Cleaning / 1000);
    const end = finishedCall(job);
    const error = end?.error;
    if (error === undefined) this.calls.inc('completed', job.stopReason ?? 'unknown');
    else this.calls.inc(error.code === 'model_cancelled' ? 'cancelled' : 'failed', codeOf(error));
    const usage = end?.usage;
    if (usage !== undefined) {
      this.tokensIn += usage.inputTokens;
      this.tokensOut += usage.outputTokens;
    }
  }
}
