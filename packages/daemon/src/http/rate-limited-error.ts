import { CataloguedError, type WireForm } from '@sluice/protocol';
import type { RateTier } from './openapi/route-doc.js';

/** What a refusal of `--rate-limit` knows: the tier, its limit and window, and when it reopens. */
export interface RateLimitRefusal {
  tier: RateTier;
  /** Requests of the tier one client may make in a window. */
  limit: number;
  windowMs: number;
  /** Until the client's window of this tier ends, ms (at least 1). */
  retryAfterMs: number;
}

/**
 * `429 rate_limit_exceeded`: this client's requests of one tier are spent until its window ends
 * (docs/decisions/035). The answer's `Retry-After` is the window's rest in whole seconds, at
 * least 1; the body names the tier, its limit and window, and `retryAfterMs`.
 */
export class RateLimitedError extends CataloguedError<'rate_limit_exceeded'> {
  readonly code = 'rate_limit_exceeded';

  constructor(readonly refusal: RateLimitRefusal) {
    const seconds = retryAfterSeconds(refusal.retryAfterMs);
    super(
      `Rate limit of the ${refusal.tier} tier reached: ${refusal.limit} requests per ` +
        `${refusal.windowMs / 1000} s per client; retry in ${seconds} s`,
    );
  }

  override wireForm(): WireForm {
    return { ...super.wireForm(), retryAfter: retryAfterSeconds(this.refusal.retryAfterMs) };
  }

  override wireDetails(): Readonly<Record<string, unknown>> {
    const { tier, limit, windowMs, retryAfterMs } = this.refusal;
    return { tier, limit, windowMs, retryAfterMs };
  }
}

/** `Retry-After` of a wait of `ms`: whole seconds, rounded up, at least 1. */
function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
