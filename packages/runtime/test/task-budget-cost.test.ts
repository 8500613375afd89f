import { describe, expect, test } from 'vitest';
import { validatePricing, type Pricing } from '../src/budget/pricing.js';
import { BudgetError } from '../src/errors.js';
import { ModelRuntime } from '../src/gateway/model-runtime.js';
import { MemoryJournal } from '../src/journal/memory-journal.js';
import { EchoProvider } from '../src/providers/echo-provider.js';

// A cheap model priced in cents: 15 cents per million input tokens, 60 per million output tokens.
const cheap: Pricing = { inputMinorPerMillionTokens: 15, outputMinorPerMillionTokens: 60 };

function cheapRuntime(): ModelRuntime {
  return new ModelRuntime({ provider: new EchoProvider(), journal: new MemoryJournal(), pricing: cheap });
}

describe('SCH-2 a cost budget bounds what the task really spent', () => {
  test('many cheap calls are summed exactly, not charged a whole minor unit each', async () => {
    const runtime = cheapRuntime();
    // Each call costs (2 * 15 + 3 * 60) / 1e6 = 0.00021 cents; 200 calls cost 0.042 cents.
    const budget = runtime.createBudget('task', { maxCostMinor: 2 });
    for (let i = 0; i < 200; i++) {
      await runtime.complete({ messages: [{ role: 'user', content: 'hello there' }] }, { budget });
    }
    await runtime.shutdown();
    expect(budget.usage()).toMatchObject({ calls: 200, inputTokens: 400, outputTokens: 600 });
    // The total, rounded up once, is 1 cent — not 200 cents.
    expect(budget.usage().costMinor).toBe(1);
  });

  test('a budget of 2 cents is not exhausted after two calls that together cost a fraction of a cent', async () => {
    const runtime = cheapRuntime();
    const budget = runtime.createBudget('task', { maxCostMinor: 2 });
    const ask = { messages: [{ role: 'user' as const, content: 'hello there' }] };
    await runtime.complete(ask, { budget });
    await runtime.complete(ask, { budget });
    let refused: unknown;
    try {
      await runtime.complete(ask, { budget });
    } catch (error) {
      refused = error;
    }
    await runtime.shutdown();
    expect(refused).not.toBeInstanceOf(BudgetError);
    expect(budget.stopped).toBeUndefined();
  });

  test('a price table missing a price is refused at construction, not turned into a NaN cost', () => {
    const partial = { inputMinorPerMillionTokens: 15 } as unknown as Pricing;
    expect(() => validatePricing(partial)).toThrow(/outputMinorPerMillionTokens/);
    expect(
      () =>
        new ModelRuntime({ provider: new EchoProvider(), journal: new MemoryJournal(), pricing: partial }),
    ).toThrow(RangeError);
  });
});
