import { InvalidTurnResultError } from './errors.js';
import type { PromptOutcome } from './queue-items.js';

/** How an agent's `runTurn` ended, or that it never started (the turn was aborted first). */
export type AgentOutcome =
  { type: 'returned'; result: unknown } | { type: 'threw'; error: unknown } | { type: 'skipped' };

const CODE_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;
const MAX_ERROR_MESSAGE_CHARS = 2_000;
const MAX_STOP_REASON_CHARS = 64;

/** A turn's failure as its `turn_error`: a bounded message, and the error's code and kind when well-formed. */
export function errorOutcome(error: unknown): PromptOutcome {
  const fields = typeof error === 'object' && error !== null ? (error as Record<string, unknown>) : {};
  const raw =
    error instanceof Error ? error.message : typeof error === 'string' ? error : 'Agent turn failed';
  const message = raw.length > MAX_ERROR_MESSAGE_CHARS ? `${raw.slice(0, MAX_ERROR_MESSAGE_CHARS)}…` : raw;
  const outcome: PromptOutcome = { kind: 'error', error, message };
  const code = fields['code'];
  if (typeof code === 'string' && CODE_PATTERN.test(code)) outcome.code = code;
  const errorKind = fields['errorKind'];
  if (typeof errorKind === 'string' && CODE_PATTERN.test(errorKind)) outcome.errorKind = errorKind;
  const retryAfterMs = fields['retryAfterMs'];
  if (typeof retryAfterMs === 'number' && Number.isFinite(retryAfterMs) && retryAfterMs >= 0)
    outcome.retryAfterMs = Math.ceil(retryAfterMs);
  const retryable = fields['retryable'];
  if (typeof retryable === 'boolean') outcome.retryable = retryable;
  return outcome;
}

/** Whether an agent returned a well-formed `TurnResult`. */
export function isTurnResult(value: unknown): value is { stopReason: string; messages?: unknown[] } {
  if (typeof value !== 'object' || value === null) return false;
  const { stopReason, messages } = value as Record<string, unknown>;
  return (
    typeof stopReason === 'string' &&
    stopReason.length > 0 &&
    stopReason.length <= MAX_STOP_REASON_CHARS &&
    (messages === undefined || Array.isArray(messages))
  );
}

/**
 * The terminal outcome of a running prompt whose agent settled: its stop reason (`cancelled`
 * once a cancel was asked for), or the agent's failure, or `invalid_turn_result`.
 */
export function turnOutcome(
  outcome: AgentOutcome,
  promptId: string,
  cancelRequested: boolean,
): PromptOutcome {
  if (outcome.type === 'returned' && isTurnResult(outcome.result))
    return { kind: 'complete', stopReason: cancelRequested ? 'cancelled' : outcome.result.stopReason };
  if (cancelRequested || outcome.type === 'skipped') return { kind: 'complete', stopReason: 'cancelled' };
  if (outcome.type === 'threw') return errorOutcome(outcome.error);
  return errorOutcome(new InvalidTurnResultError(promptId));
}
