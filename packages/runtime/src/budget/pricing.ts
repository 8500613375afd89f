import type { Usage } from '../types.js';

/** Prices per million tokens in integer minor currency units, for budgets on cost. */
export interface Pricing {
  inputMinorPerMillionTokens: number;
  outputMinorPerMillionTokens: number;
}

/** The cost of `usage` in integer minor units, rounded up so budgets never under-count. */
export function costOf(usage: Usage | undefined, pricing: Pricing | undefined): number {
  if (!usage || !pricing) return 0;
  const micro =
    usage.inputTokens * pricing.inputMinorPerMillionTokens +
    usage.outputTokens * pricing.outputMinorPerMillionTokens;
  return Math.ceil(micro / 1_000_000);
}

/** Validates a price table, naming the offending value. */
export function validatePricing(pricing: Pricing): Pricing {
  for (const [name, value] of Object.entries(pricing)) {
    if (!(Number.isSafeInteger(value) && value >= 0)) {
      throw new RangeError(`pricing.${name} must be a non-negative integer, got ${String(value)}`);
    }
  }
  return pricing;
}
