import {
  SESSION_EVENT,
  type AdmissionObserver,
  type SessionEvent,
  type SessionEventSink,
} from '../sessions/index.js';
import { LabeledCounts } from './labeled-counts.js';
import type { RecentRefusals } from './recent-refusals.js';

/** How a turn ended, as metrics and the dashboard count it. */
export type TurnOutcome = 'completed' | 'cancelled' | 'failed';

/** The stable `code` of an error, or `internal_error` for one without. */
export function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : 'internal_error';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : 'refused';
}

/**
 * The sessions layer's counters: prompts admitted and refused (by code), and turns by how they
 * ended (by stop reason or error code). It is told by the bridge as admission decides and as
 * terminal events are published, so it counts exactly what clients were told.
 */
export class PromptTap implements AdmissionObserver, SessionEventSink {
  private admittedCount = 0;
  /** Refused prompts by error code. */
  readonly refusals = new LabeledCounts(['code'], 64);
  /** Terminal events by outcome and code (stop reason or error code). */
  readonly turns = new LabeledCounts(['outcome', 'code'], 64);

  constructor(private readonly recent: RecentRefusals) {}

  /** Prompts admitted since start (a retry answered by its `Idempotency-Key` is not one). */
  get admittedPrompts(): number {
    return this.admittedCount;
  }

  admitted(): void {
    this.admittedCount++;
  }

  refused(sessionId: string, error: unknown): void {
    const code = codeOf(error);
    this.refusals.inc(code);
    this.recent.add('prompt', code, sessionId, () => messageOf(error));
  }

  /** Counts terminal events; every other event passes untouched. */
  publish(_sessionId: string, event: SessionEvent): void {
    if (event.type === SESSION_EVENT.turnComplete) {
      const stopReason = event.data['stopReason'];
      const reason = typeof stopReason === 'string' ? stopReason : 'unknown';
      this.turns.inc(reason === 'cancelled' ? 'cancelled' : 'completed', reason);
    } else if (event.type === SESSION_EVENT.turnError) {
      const code = event.data['code'];
      this.turns.inc('failed', typeof code === 'string' ? code : 'unknown');
    }
  }

  /** Turns that ended with `outcome` since start. */
  turnCount(outcome: TurnOutcome): number {
    return this.turns.total(outcome);
  }
}
