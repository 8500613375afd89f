import { systemClock, type Clock } from '../clock.js';
import { BudgetError, type BudgetReason } from '../errors.js';
import { minorOfMicro } from './pricing.js';
import { jsonStringBytes } from '../scheduler/request-size.js';
import type { Usage } from '../types.js';
import { nonNegativeInteger } from '../validate.js';

/** Cumulative limits of one task (SCH-2, SCH-19); an absent field is unlimited. */
export interface TaskBudgetLimits {
  maxCalls?: number;
  maxInputTokens?: number;
  maxOutputTokens?: number;
  /** Cost in integer minor currency units (cents, fen, …). */
  maxCostMinor?: number;
  /** Time during which at least one model call of the task was in flight. */
  maxActivityMs?: number;
}

/** What a task consumed; also its run report after draining (SCH-19). */
export interface TaskUsage {
  taskId: string;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costMinor: number;
  activityMs: number;
  /** Why the budget stopped, if it did. */
  stoppedReason?: BudgetReason;
}

/**
 * What a task had spent before this budget object existed — recovered from the journal after
 * a restart (see `spendOf`). Cost is exact, in millionths of a minor unit.
 */
export interface SpentBefore {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costMicro: number;
  activityMs: number;
}

const LIMIT_NAMES = [
  'maxCalls',
  'maxInputTokens',
  'maxOutputTokens',
  'maxCostMinor',
  'maxActivityMs',
] as const;

/**
 * The cumulative budget of one task, shared explicitly by the host across turns, agents and
 * tools. The scheduler bounds what runs at once; the budget bounds what a task uses in total.
 * Once stopped it refuses new calls, while accepted calls still record and settle.
 */
export class TaskBudget {
  readonly limits: Readonly<TaskBudgetLimits>;
  private readonly clock: Clock;
  private calls = 0;
  private inputTokens = 0;
  private outputTokens = 0;
  /** Exact cost in millionths of a minor unit; rounded up once when read (never per call). */
  private costMicro = 0;
  private activeCalls = 0;
  private activeSince = 0;
  private activityMs = 0;
  private stoppedReason: BudgetReason | undefined;

  private readonly limited: boolean;
  private taskIdBytes = -1;

  /**
   * A budget for `taskId` on `clock`; `spentBefore` resumes a task that already spent (a
   * durable budget after a restart), so its limits count what was spent before too.
   */
  constructor(
    readonly taskId: string,
    limits: TaskBudgetLimits = {},
    clock: Clock = systemClock,
    spentBefore?: SpentBefore,
  ) {
    if (typeof taskId !== 'string' || taskId.length === 0) {
      throw new TypeError(`taskId must be a non-empty string, got ${JSON.stringify(taskId)}`);
    }
    this.limits = validated.has(limits) ? limits : validateBudgetLimits(limits);
    this.limited = LIMIT_NAMES.some((name) => this.limits[name] !== undefined);
    this.clock = clock;
    if (spentBefore !== undefined) {
      this.calls = nonNegativeInteger('spentBefore.calls', spentBefore.calls);
      this.inputTokens = nonNegativeInteger('spentBefore.inputTokens', spentBefore.inputTokens);
      this.outputTokens = nonNegativeInteger('spentBefore.outputTokens', spentBefore.outputTokens);
      this.costMicro = nonNegativeInteger('spentBefore.costMicro', spentBefore.costMicro);
      this.activityMs = nonNegativeInteger('spentBefore.activityMs', spentBefore.activityMs);
    }
  }

  /** True when none of the task's calls is in flight. */
  get idle(): boolean {
    return this.activeCalls === 0;
  }

  /** @internal The JSON byte length of `taskId`, counted once for every call's size check. */
  get taskIdJsonBytes(): number {
    if (this.taskIdBytes < 0) this.taskIdBytes = jsonStringBytes(this.taskId, Infinity);
    return this.taskIdBytes;
  }

  /** The reason this budget refuses calls, or undefined while it accepts them. */
  get stopped(): BudgetReason | undefined {
    return this.stoppedReason ?? this.exhaustedReason();
  }

  /** Stops the budget by the host's decision; accepted calls still finish. */
  stop(reason: BudgetReason = 'stopped'): void {
    this.stoppedReason ??= reason;
  }

  /** Throws `BudgetError` if no further call may start; never awaits. */
  check(): void {
    const reason = this.stopped;
    if (reason) throw new BudgetError(reason, this.taskId, this.describe(reason));
  }

  /** Activity time a new call may still spend, or undefined when unlimited. */
  remainingActivityMs(): number | undefined {
    const max = this.limits.maxActivityMs;
    return max === undefined ? undefined : Math.max(0, max - this.currentActivityMs());
  }

  /** @internal Counts a call admitted at `now` and starts its activity time. */
  begin(now = this.clock.now()): void {
    this.calls++;
    if (this.activeCalls++ === 0) this.activeSince = now;
  }

  /**
   * @internal Adds what a finished call used — its cost exact, in millionths of a minor unit
   * (see `costMicroOf`); the budget stops itself when a limit is reached.
   */
  settle(usage: Usage | undefined, costMicro: number): void {
    if (usage) {
      this.inputTokens += usage.inputTokens;
      this.outputTokens += usage.outputTokens;
    }
    this.costMicro += costMicro;
    if (--this.activeCalls === 0) this.activityMs += this.clock.now() - this.activeSince;
  }

  /** What the task used so far. */
  usage(): TaskUsage {
    const usage: TaskUsage = {
      taskId: this.taskId,
      calls: this.calls,
      inputTokens: this.inputTokens,
      outputTokens: this.outputTokens,
      costMinor: minorOfMicro(this.costMicro),
      activityMs: Math.round(this.currentActivityMs()),
    };
    const reason = this.stopped;
    if (reason) usage.stoppedReason = reason;
    return usage;
  }

  private currentActivityMs(): number {
    return this.activityMs + (this.activeCalls > 0 ? this.clock.now() - this.activeSince : 0);
  }

  private exhaustedReason(): BudgetReason | undefined {
    if (!this.limited) return undefined;
    const l = this.limits;
    if (l.maxCalls !== undefined && this.calls >= l.maxCalls) return 'calls';
    if (l.maxInputTokens !== undefined && this.inputTokens >= l.maxInputTokens) return 'input_tokens';
    if (l.maxOutputTokens !== undefined && this.outputTokens >= l.maxOutputTokens) return 'output_tokens';
    if (l.maxCostMinor !== undefined && minorOfMicro(this.costMicro) >= l.maxCostMinor) return 'cost';
    if (l.maxActivityMs !== undefined && this.currentActivityMs() >= l.maxActivityMs) return 'activity_time';
    return undefined;
  }

  private describe(reason: BudgetReason): string | undefined {
    switch (reason) {
      case 'calls':
        return `${this.calls}/${this.limits.maxCalls} calls`;
      case 'input_tokens':
        return `${this.inputTokens}/${this.limits.maxInputTokens} input tokens`;
      case 'output_tokens':
        return `${this.outputTokens}/${this.limits.maxOutputTokens} output tokens`;
      case 'cost':
        return `${minorOfMicro(this.costMicro)}/${this.limits.maxCostMinor} cost units`;
      case 'activity_time':
        return `${Math.round(this.currentActivityMs())}/${this.limits.maxActivityMs} ms of activity`;
      default:
        return undefined;
    }
  }
}

/**
 * Validates budget limits once, naming the offending value, and returns them frozen; the
 * returned object is trusted by {@link TaskBudget}, so per-call temporary budgets stay cheap.
 */
export function validateBudgetLimits(limits: TaskBudgetLimits): Readonly<TaskBudgetLimits> {
  for (const name of LIMIT_NAMES) {
    const value = limits[name];
    if (value !== undefined) nonNegativeInteger(name, value);
  }
  const frozen = Object.freeze({ ...limits });
  validated.add(frozen);
  return frozen;
}

const validated = new WeakSet<object>();
