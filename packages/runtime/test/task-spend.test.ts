import { describe, expect, test } from 'vitest';
import { reservedUsage, spendOf } from '../src/budget/spend.js';
import { runReportOf } from '../src/budget/run-report.js';
import { TaskBudget } from '../src/budget/task-budget.js';
import { BudgetError } from '../src/errors.js';
import type { JournalRecord, ModelRequestRecord, ModelResultRecord } from '../src/journal/records.js';
import type { GenerationRequest } from '../src/types.js';
import { FakeClock } from '../src/testing/index.js';

// Issue 21: a durable budget's spend is what its journal records say — recorded results, plus
// calls a killed daemon left (`interrupted`) or still open, at their reserved cost.

const T0 = Date.parse('2030-01-01T00:00:00.000Z');

function request(
  callId: string,
  atMs: number,
  req: GenerationRequest,
  timeoutMs = 60_000,
): ModelRequestRecord {
  return {
    version: 1,
    type: 'model_request',
    callId,
    taskId: 'task',
    at: new Date(atMs).toISOString(),
    request: req,
    options: { timeoutMs, provider: 'echo', model: 'echo', kind: 'stream' },
  };
}

function result(
  callId: string,
  durationMs: number,
  extra: Partial<ModelResultRecord> = {},
): ModelResultRecord {
  return {
    version: 1,
    type: 'model_result',
    callId,
    taskId: 'task',
    at: new Date(T0).toISOString(),
    outcome: 'success',
    durationMs,
    ...extra,
  };
}

function interrupted(callId: string, durationMs: number): ModelResultRecord {
  return result(callId, durationMs, { outcome: 'error', error: { code: 'interrupted', message: 'killed' } });
}

const hello: GenerationRequest = { messages: [{ role: 'user', content: 'hello there' }] };

describe('spendOf: the journal is the truth of what a task spent', () => {
  test('calls are the requests; tokens and cost are the recorded results', () => {
    const records: JournalRecord[] = [
      request('a', T0, hello),
      result('a', 100, { usage: { inputTokens: 5, outputTokens: 7 }, costMinor: 2 }),
      request('b', T0 + 1000, hello),
      result('b', 50, { outcome: 'error', error: { code: 'model_timeout', message: 'late' } }),
    ];
    expect(spendOf(records)).toEqual({
      calls: 2,
      inputTokens: 5,
      outputTokens: 7,
      costMicro: 2_000_000,
      costMinor: 2,
      activityMs: 150,
      interruptedCalls: 0,
      openCalls: 0,
    });
  });

  test('an interrupted call counts at its reserved cost: input estimated from its request, output at maxOutputTokens', () => {
    const text = 'x'.repeat(40) + ' two words';
    const asked: GenerationRequest = {
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: text },
      ],
      maxOutputTokens: 64,
    };
    // 8 + 50 UTF-8 bytes of text: ceil(58 / 4) = 15 tokens, more than its 5 words.
    expect(reservedUsage(asked)).toEqual({ inputTokens: 15, outputTokens: 64 });
    const spend = spendOf([request('a', T0, asked), interrupted('a', 5_000)]);
    expect(spend).toMatchObject({ calls: 1, inputTokens: 15, outputTokens: 64, interruptedCalls: 1 });
  });

  test('a gateway call reserves the max_completion_tokens or max_tokens it passed through', () => {
    const ask = (extra: Record<string, unknown>): GenerationRequest => ({ ...hello, extra });
    expect(reservedUsage(ask({ max_tokens: 32 })).outputTokens).toBe(32);
    expect(reservedUsage(ask({ max_completion_tokens: 20, max_tokens: 32 })).outputTokens).toBe(20);
    expect(reservedUsage(ask({ max_tokens: 'many' })).outputTokens).toBe(0);
  });

  test('the reserved input is the word count when words are shorter than four bytes', () => {
    expect(reservedUsage({ messages: [{ role: 'user', content: 'a b c d e f' }] }).inputTokens).toBe(6);
  });

  test('a call with no result yet (running on another node) counts at its reserved cost too', () => {
    const spend = spendOf([request('a', T0, hello)]);
    expect(spend).toMatchObject({ calls: 1, inputTokens: 3, outputTokens: 0, openCalls: 1 });
  });

  test('activity is the union of the calls’ spans; an interrupted call’s span stops at its timeout', () => {
    const records: JournalRecord[] = [
      request('a', T0, hello),
      result('a', 1_000),
      request('b', T0 + 500, hello),
      result('b', 1_000), // overlaps a: together 1.5 s
      request('c', T0 + 10_000, hello, 2_000),
      interrupted('c', 3_600_000), // the daemon was down for an hour: counts 2 s
    ];
    expect(spendOf(records).activityMs).toBe(3_500);
  });

  test('with a price table, cost is exact from usage, as a live budget sums it', () => {
    const records: JournalRecord[] = [];
    for (let i = 0; i < 200; i++) {
      records.push(request(`c${i}`, T0 + i, hello));
      // Each result says 1 cent, rounded up from 0.00021 cents.
      records.push(result(`c${i}`, 1, { usage: { inputTokens: 2, outputTokens: 3 }, costMinor: 1 }));
    }
    const pricing = { inputMinorPerMillionTokens: 15, outputMinorPerMillionTokens: 60 };
    expect(spendOf(records, pricing).costMinor).toBe(1);
    expect(spendOf(records).costMinor).toBe(200);
  });
});

describe('SCH-2 a resumed TaskBudget counts what the task spent before', () => {
  test('a budget resumed at its call limit refuses the next call', () => {
    const spent = spendOf([
      request('a', T0, hello),
      result('a', 10),
      request('b', T0, hello),
      result('b', 10),
    ]);
    const budget = new TaskBudget('task', { maxCalls: 2 }, new FakeClock(), spent);
    expect(budget.usage()).toMatchObject({ calls: 2, stoppedReason: 'calls' });
    expect(() => budget.check()).toThrow(BudgetError);
  });

  test('live calls add to the recovered spend', () => {
    const clock = new FakeClock();
    const budget = new TaskBudget('task', { maxInputTokens: 100 }, clock, {
      calls: 3,
      inputTokens: 40,
      outputTokens: 9,
      costMicro: 0,
      activityMs: 700,
    });
    budget.begin();
    clock.advance(300);
    budget.settle({ inputTokens: 10, outputTokens: 1 }, 0);
    expect(budget.usage()).toEqual({
      taskId: 'task',
      calls: 4,
      inputTokens: 50,
      outputTokens: 10,
      costMinor: 0,
      activityMs: 1_000,
    });
    expect(budget.idle).toBe(true);
  });

  test('a recovered spend that is not a count is refused, naming it', () => {
    const bad = { calls: -1, inputTokens: 0, outputTokens: 0, costMicro: 0, activityMs: 0 };
    expect(() => new TaskBudget('task', {}, new FakeClock(), bad)).toThrow(/spentBefore\.calls/);
  });
});

describe('runReportOf: a run report from the journal alone', () => {
  test('lists each call with usage, duration and phases, and sums them like a budget', () => {
    const records: JournalRecord[] = [
      request('a', T0, hello),
      result('a', 120, {
        usage: { inputTokens: 5, outputTokens: 7 },
        phases: { queuedMs: 20, preparingMs: 1, executingMs: 99 },
      }),
      request('b', T0 + 200, hello),
      interrupted('b', 400),
    ];
    const report = runReportOf(records);
    expect(report.calls).toEqual([
      {
        callId: 'a',
        outcome: 'success',
        usage: { inputTokens: 5, outputTokens: 7 },
        durationMs: 120,
        phases: { queuedMs: 20, preparingMs: 1, executingMs: 99 },
      },
      {
        callId: 'b',
        outcome: 'error',
        code: 'interrupted',
        usage: { inputTokens: 3, outputTokens: 0 },
        reserved: true,
        durationMs: 400,
      },
    ]);
    expect(report.totals).toEqual({
      calls: 2,
      inputTokens: 8,
      outputTokens: 7,
      costMinor: 0,
      queuedMs: 20,
      preparingMs: 1,
      executingMs: 99,
      wallMs: 600,
    });
  });
});
