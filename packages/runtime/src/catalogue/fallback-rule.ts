import { OverloadedError, ProviderError } from '../errors.js';

/**
 * Whether a failed attempt may pass to the next model of its fallbacks: the scheduler was full
 * (`model_overloaded`), or the upstream answered `429` or a `5xx`, or could not be reached (a
 * provider error without a status that may pass). Never another `4xx`: the request itself is at
 * fault and would fail on every model alike. Budgets, deadlines and cancels end the call.
 */
export function mayFallBack(error: unknown): boolean {
  if (error instanceof OverloadedError) return true;
  if (!(error instanceof ProviderError)) return false;
  const status = error.upstream?.status ?? error.status;
  if (status === undefined) return error.retryable;
  return status === 429 || status >= 500;
}
