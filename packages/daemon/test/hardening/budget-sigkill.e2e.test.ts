import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { api, openEvents, textPrompt } from '../helpers/http-client.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';
import { until } from '../helpers/until.js';

// Issue 21 acceptance: a durable budget's spend after a crash equals the journal's. A budget is
// charged by a completed prompt and a completed gateway call; then the daemon is killed with
// SIGKILL while a prompt and a gateway call on the budget are executing. The next daemon on the
// same data directory answers GET /budgets/:id with exactly what the SQLite file's records say —
// computed here from the file, independently of the daemon's code — and later calls add to it
// without counting anything twice.

const ECHO_DELAY_MS = 1500;
const BUDGET = 'kill-budget';

let dataDir: string;
let workspace: string;
let first: SluiceProcess | undefined;
let second: SluiceProcess | undefined;
let sessionId: string;

const serveArgs = (): string[] => [
  '--data-dir',
  dataDir,
  '--workspace',
  workspace,
  '--echo-delay-ms',
  String(ECHO_DELAY_MS),
];

async function runPrompt(url: string, text: string): Promise<void> {
  const events = await openEvents(url, sessionId);
  const sent = await api(url, 'POST', `/session/${sessionId}/prompt`, {
    body: { ...textPrompt(text), budgetId: BUDGET },
  });
  expect(sent.status).toBe(202);
  await events.waitFor((f) => f.event === 'turn_complete' && f.data.promptId === sent.body.promptId, 15_000);
  events.close();
}

const chat = (text: string): Record<string, unknown> => ({
  messages: [{ role: 'user', content: text }],
  max_tokens: 32,
});

beforeAll(async () => {
  dataDir = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-budget-kill-data-')));
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-budget-kill-ws-')));
  first = await startSluice(serveArgs());
  const url = first.url;
  const created = await api(url, 'POST', '/budgets', {
    body: { budgetId: BUDGET, limits: { maxCalls: 50 } },
  });
  expect(created.status).toBe(201);
  sessionId = (await api(url, 'POST', '/session', { body: { sessionScope: 'thread' } })).body.sessionId;
  // Spend that completes before the kill: one prompt, one gateway call.
  await runPrompt(url, 'the first prompt of the task');
  const call = await api(url, 'POST', '/v1/chat/completions', {
    body: chat('a finished gateway call'),
    headers: { 'x-sluice-budget': BUDGET },
  });
  expect(call.status).toBe(200);
  // Then a prompt and a gateway call that are executing when the daemon dies.
  const running = await api(url, 'POST', `/session/${sessionId}/prompt`, {
    body: { ...textPrompt('a prompt the kill interrupts, with many more words in it'), budgetId: BUDGET },
  });
  expect(running.status).toBe(202);
  void api(url, 'POST', '/v1/chat/completions', {
    body: chat('a gateway call the kill interrupts'),
    headers: { 'x-sluice-budget': BUDGET },
  }).catch(() => {});
  await until(async () => {
    const jobs = (await api(url, 'GET', '/runtime/snapshot')).body.jobs ?? [];
    return jobs.filter((job: { phase: string }) => job.phase === 'Executing').length >= 2;
  }, 'both calls execute');
  await first.stop('SIGKILL');
  second = await startSluice(serveArgs());
}, 60_000);

afterAll(async () => {
  await Promise.all([first?.stop('SIGKILL'), second?.stop()]);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

interface Spend {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costMinor: number;
  activityMs: number;
}

/**
 * The budget's spend as the journal file says it, by the rule of issue 21: every request is a
 * call; a result's usage counts; a call without usage (interrupted) counts its reserved input
 * (the larger of its words and a token per 4 UTF-8 bytes of its messages) and its `max_tokens`;
 * activity is the union of [admission, admission + duration], an interrupted one cut at its
 * timeout. Read with SQL straight from the file once the second daemon settled it.
 */
function journalSpend(): Spend & { interrupted: number } {
  const db = new Database(join(dataDir, 'journal.db'), { readonly: true });
  try {
    const rows = db
      .prepare(`SELECT body FROM journal_records WHERE json_extract(body, '$.taskId') = ? ORDER BY seq`)
      .pluck()
      .all(BUDGET) as string[];
    const records = rows.map((body) => JSON.parse(body));
    const requests = records.filter((r) => r.type === 'model_request');
    const results = new Map(records.filter((r) => r.type === 'model_result').map((r) => [r.callId, r]));
    const spend = { calls: requests.length, inputTokens: 0, outputTokens: 0, costMinor: 0, activityMs: 0 };
    let interrupted = 0;
    const spans: Array<[number, number]> = [];
    for (const request of requests) {
      const result = results.get(request.callId);
      expect(result).toBeDefined(); // the second daemon settled every call
      const start = Date.parse(request.at);
      if (result.error?.code === 'interrupted') {
        interrupted++;
        const texts: string[] = request.request.messages.map((m: { content: string }) => m.content);
        const words = texts.reduce((n, t) => n + (t.match(/\S+/g)?.length ?? 0), 0);
        const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t), 0);
        spend.inputTokens += Math.max(words, Math.ceil(bytes / 4));
        spend.outputTokens += request.request.maxOutputTokens ?? request.request.extra?.max_tokens ?? 0;
        spans.push([start, start + Math.min(result.durationMs, request.options.timeoutMs)]);
      } else {
        spend.inputTokens += result.usage?.inputTokens ?? 0;
        spend.outputTokens += result.usage?.outputTokens ?? 0;
        spend.costMinor += result.costMinor ?? 0;
        spans.push([start, start + result.durationMs]);
      }
    }
    spans.sort((a, b) => a[0] - b[0]);
    let end = -Infinity;
    for (const [from, to] of spans) {
      if (to > end) spend.activityMs += to - Math.max(from, end);
      end = Math.max(end, to);
    }
    spend.activityMs = Math.round(spend.activityMs);
    return { ...spend, interrupted };
  } finally {
    db.close();
  }
}

describe('a durable budget after kill -9', () => {
  test('its spend equals what the journal records, interrupted calls at their reserved cost', async () => {
    const read = await api(second!.url, 'GET', `/budgets/${BUDGET}`);
    expect(read.status).toBe(200);
    const { interrupted, ...fromFile } = journalSpend();
    expect(interrupted).toBe(2);
    expect(fromFile.calls).toBe(4);
    expect(read.body.spent).toEqual(fromFile);
    expect(read.body.limits).toEqual({ maxCalls: 50 });
  });

  test('a call after the restart adds its own usage, and nothing is counted twice', async () => {
    const before = (await api(second!.url, 'GET', `/budgets/${BUDGET}`)).body.spent as Spend;
    const call = await api(second!.url, 'POST', '/v1/chat/completions', {
      body: chat('after the restart'),
      headers: { 'x-sluice-budget': BUDGET },
    });
    expect(call.status).toBe(200);
    const after = (await api(second!.url, 'GET', `/budgets/${BUDGET}`)).body.spent as Spend;
    expect(after.calls).toBe(before.calls + 1);
    expect(after.inputTokens).toBe(before.inputTokens + call.body.usage.prompt_tokens);
    expect(after.outputTokens).toBe(before.outputTokens + call.body.usage.completion_tokens);
    const { calls, inputTokens, outputTokens } = journalSpend();
    expect({ calls, inputTokens, outputTokens }).toEqual({
      calls: after.calls,
      inputTokens: after.inputTokens,
      outputTokens: after.outputTokens,
    });
  });
});
