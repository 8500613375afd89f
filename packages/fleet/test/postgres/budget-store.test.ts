import { afterAll, beforeAll, expect, test } from 'vitest';
import { openPostgresFleet, type PostgresFleet } from '../../src/index.js';
import { freshSchema, PG_URL, type TestSchema } from './pg-schema.js';

// Durable budgets (issue 21 part 3) on the fleet's store: every daemon opens the same budgets,
// and their spend is the shared journal's records with the budget's task id.

let schema: TestSchema;
let a: PostgresFleet;
let b: PostgresFleet;

beforeAll(async () => {
  schema = await freshSchema('budgets');
  a = await openPostgresFleet({ url: PG_URL, schema: schema.name });
  b = await openPostgresFleet({ url: PG_URL, schema: schema.name });
});

afterAll(async () => {
  await a?.close();
  await b?.close();
  await schema.drop();
});

test('a budget created on one daemon is read on another, and its id cannot be created twice', async () => {
  const definition = { budgetId: 'team-q3', limits: { maxCalls: 10, maxCostMinor: 500 }, createdAt: 1_000 };
  expect(await a.budgets.insert(definition, 100)).toBe('created');
  expect(await b.budgets.get('team-q3')).toEqual(definition);
  expect(await b.budgets.insert({ ...definition, limits: { maxCalls: 1 } }, 100)).toBe('exists');
  expect(await a.budgets.get('team-q3')).toEqual(definition);
  expect(await a.budgets.get('nobody')).toBeUndefined();
});

test('concurrent creates on two daemons never pass the fleet-wide bound', async () => {
  const before = (await schema.sql`SELECT count(*)::int AS n FROM sluice_budgets`)[0]!['n'] as number;
  const bound = before + 3;
  const outcomes = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      (i % 2 === 0 ? a : b).budgets.insert({ budgetId: `race-${i}`, limits: {}, createdAt: i }, bound),
    ),
  );
  expect(outcomes.filter((o) => o === 'created')).toHaveLength(3);
  expect(outcomes.filter((o) => o === 'full')).toHaveLength(7);
});

test("a budget's calls are read back from the shared journal by its task id", async () => {
  const at = new Date(0).toISOString();
  await a.journal.append({
    version: 1,
    type: 'model_request',
    callId: 'c-1',
    taskId: 'team-q3',
    at,
    request: { messages: [{ role: 'user', content: 'hi' }] },
    options: { timeoutMs: 1_000, provider: 'echo', model: 'echo', kind: 'complete' },
  });
  const records = await b.journal.recordsForTask('team-q3');
  expect(records.map((r) => [r.callId, r.type])).toEqual([['c-1', 'model_request']]);
});
