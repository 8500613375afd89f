import {
  EVENT_TYPES,
  type EventEnvelope,
  type PromptResult,
  type StateResyncRequiredData,
  type TurnErrorData,
} from '@sluice/protocol';
import { DaemonTurnError } from './errors.js';

function promptIdOf(event: EventEnvelope): string | undefined {
  if (typeof event.promptId === 'string') return event.promptId;
  const data = event.data as { promptId?: unknown } | null;
  return typeof data === 'object' && data !== null && typeof data.promptId === 'string'
    ? data.promptId
    : undefined;
}

/** True for `turn_complete` / `turn_error`: exactly one of them ends every admitted prompt. */
export function isTerminalEvent(event: EventEnvelope): boolean {
  return event.type === EVENT_TYPES.turnComplete || event.type === EVENT_TYPES.turnError;
}

/** The prompt a terminal event ends, or `undefined` for any other event. */
export function terminalPromptId(event: EventEnvelope): string | undefined {
  return isTerminalEvent(event) ? promptIdOf(event) : undefined;
}

/**
 * Reads a terminal event of `promptId`: its `PromptResult` for `turn_complete`, a thrown
 * {@link DaemonTurnError} for `turn_error`, `undefined` for every other event.
 */
export function matchTurnEvent(event: EventEnvelope, promptId: string): PromptResult | undefined {
  if (terminalPromptId(event) !== promptId) return undefined;
  return settleTerminal(event);
}

/** The outcome a terminal event carries (see {@link matchTurnEvent}). */
export function settleTerminal(event: EventEnvelope): PromptResult {
  if (event.type === EVENT_TYPES.turnError) throw new DaemonTurnError(event as EventEnvelope<TurnErrorData>);
  const data = (event.data ?? {}) as Record<string, unknown>;
  return { ...data, stopReason: typeof data['stopReason'] === 'string' ? data['stopReason'] : 'end_turn' };
}

/**
 * Spots a reset of the daemon's bus (`state_resync_required {reason:'epoch_reset'}`): after
 * it, the replayed ring cannot hold the ends of prompts admitted before the reset.
 */
export class EpochResetWatch {
  private resyncing = false;

  /** True at the `replay_complete` that ends an `epoch_reset` replay. */
  replayEnded(event: EventEnvelope): boolean {
    if (event.type === EVENT_TYPES.stateResyncRequired)
      this.resyncing ||= (event.data as StateResyncRequiredData | null)?.reason === 'epoch_reset';
    else if (event.type === EVENT_TYPES.replayComplete && this.resyncing) {
      this.resyncing = false;
      return true;
    }
    return false;
  }
}
