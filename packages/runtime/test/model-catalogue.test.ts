import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  BudgetError,
  MemoryJournal,
  ModelCatalogue,
  ModelNotFoundError,
  ModelRuntime,
  type ModelRequestRecord,
} from '../src/index.js';
import { OpenAIProvider } from '../src/providers/openai-provider.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from './helpers/fake-openai-server.js';

// The model catalogue's fallbacks (issue 29) over real HTTP upstreams on loopback.

let primary: FakeOpenAIServer;
let backup: FakeOpenAIServer;
beforeAll(async () => {
  primary = await startFakeOpenAIServer();
  backup = await startFakeOpenAIServer({ reply: { text: 'backup' } });
});
afterAll(async () => {
  await primary?.close();
  await backup?.close();
});

const request = { messages: [{ role: 'user' as const, content: 'hi' }] };

function catalogue(journal: MemoryJournal, primaryLimits = {}): ModelCatalogue {
  const runtime = (server: FakeOpenAIServer, model: string, scheduler = {}) =>
    new ModelRuntime({
      provider: new OpenAIProvider({ baseURL: server.baseURL, apiKey: 'k', model }),
      journal,
      scheduler,
    });
  return new ModelCatalogue([
    { name: 'main', runtime: runtime(primary, 'up-main', primaryLimits), fallbacks: ['spare'] },
    { name: 'spare', runtime: runtime(backup, 'up-spare') },
  ]);
}

const requests = (journal: MemoryJournal): ModelRequestRecord[] =>
  journal.records().filter((record): record is ModelRequestRecord => record.type === 'model_request');

describe('fallbacks', () => {
  test('budgets count every attempt: a failed primary and its fallback are two calls of the task', async () => {
    primary.reply({ status: 500 });
    const journal = new MemoryJournal();
    const models = catalogue(journal);
    const budget = models.defaultModel.runtime.createBudget('task-1', { maxCalls: 2 });
    const answer = await models.complete('main', request, { budget });
    expect(answer).toMatchObject({ model: 'spare', response: { text: 'backup' } });
    expect(budget.usage().calls).toBe(2);
    // The task's budget is spent: a third attempt is refused, not retried elsewhere.
    expect(() => models.complete('main', request, { budget })).toThrow(BudgetError);
    await models.shutdown();
  });

  test('a primary refused for overload at admission passes to the fallback at once, recording nothing', async () => {
    primary.reply({ hang: true });
    const journal = new MemoryJournal();
    const models = catalogue(journal, { maxConcurrency: 1, maxQueued: 0 });
    const held = new AbortController();
    const holding = models.complete('main', request, { signal: held.signal }).catch(() => undefined);
    const answer = await models.complete('main', request);
    expect(answer.model).toBe('spare');
    const recorded = requests(journal);
    expect(recorded.map((record) => [record.options.model, record.options.fallbackOf])).toEqual([
      ['up-main', undefined],
      ['up-spare', undefined],
    ]);
    held.abort();
    await holding;
    await models.shutdown();
  });

  test('a stream whose primary fails before its first event continues on the fallback, linked to the first call', async () => {
    primary.reply({ status: 503 });
    const journal = new MemoryJournal();
    const models = catalogue(journal);
    const stream = models.stream('main', request);
    let text = '';
    for await (const event of stream) if (event.type === 'delta') text += event.text;
    expect(text).toBe('backup');
    expect(stream.model).toBe('spare');
    const [first, second] = requests(journal);
    expect(first!.callId).toBe(stream.callId);
    expect(second!.options.fallbackOf).toBe(stream.callId);
    await models.shutdown();
  });

  test('the last model of the chain fails with its own error; a call without fallbacks never tries another', async () => {
    primary.reply({ status: 503 });
    backup.reply({ status: 502 });
    const models = catalogue(new MemoryJournal());
    await expect(models.complete('main', request)).rejects.toMatchObject({ status: 502 });
    backup.reply({ text: 'backup' });
    primary.reply({ status: 503 });
    const before = primary.requestCount;
    await expect(models.complete('spare', request)).resolves.toMatchObject({ model: 'spare' });
    expect(primary.requestCount).toBe(before);
    await models.shutdown();
  });
});

test('names: an unknown one is ModelNotFoundError; `default` names the first model; bad catalogues are refused', () => {
  const journal = new MemoryJournal();
  const models = catalogue(journal);
  expect(() => models.complete('gpt-4o', request)).toThrow(ModelNotFoundError);
  expect(models.get('default').name).toBe('main');
  expect(models.names()).toEqual(['main', 'spare']);
  const runtime = models.defaultModel.runtime;
  expect(() => new ModelCatalogue([])).toThrow(/at least one model/);
  expect(() => new ModelCatalogue([{ name: 'a', runtime, fallbacks: ['b'] }])).toThrow(
    /not in the catalogue/,
  );
  expect(() => new ModelCatalogue([{ name: 'a', runtime, aliases: ['a'] }])).toThrow(/given twice/);
});
