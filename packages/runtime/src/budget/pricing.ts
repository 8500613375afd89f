import type { Usage } from '../types.js';
import { nonNegativeInteger } from '../validate.js';

/** Prices per million tokens in integer minor currency units, for budgets on cost. */
export interface Pricing {
  inputMinorPerMillionTokens: number;
  outputMinorPerMillionTokens: number;
}

/**
 * The exact cost of `usage` in millionths of a minor unit — an integer, so a budget can sum
 * calls without rounding each one (SCH-2) and round the total once.
 */
export function costMicroOf(usage: Usage | undefined, pricing: Pricing | undefined): number {
  if (!usage || !pricing) return 0;
  return (
    usage.inputTokens * pricing.inputMinorPerMillionTokens +
    usage.outputTokens * pricing.outputMinorPerMillionTokens
  );
}

/** Whole minor units for `micro` millionths of one, rounded up so budgets never under-count. */
export function minorOfMicro(micro: number): number {
  return Math.ceil(micro / 1_000_000);
}

/** The cost of `usage` in integer minor units, rounded up so budgets never under-count. */
export function costOf(usage: Usage | undefined, pricing: Pricing | undefined): number {
  return minorOfMicro(costMicroOf(usage, pricing));
}

const PRICE_NAMES = ['inputMinorPerMillionTokens', 'outputMinorPerMillionTokens'] as const;

/** Validates a price table, naming the offending value; both prices are required. */
export function validatePricing(pricing: Pricing): Pricing {
  for (const name of PRICE_NAMES) nonNegativeInteger(`pricing.${name}`, pricing[name]);
  return pricing;
}
