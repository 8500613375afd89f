import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// Issue 19 items 1 and 2: a body field nested thousands of levels deep, or megabytes long, must
// give the route's 400 with its stable code — never a 500 from describing the value — and the
// message quotes at most a bounded prefix of what was sent.

const DEPTH = 5_000;
// Bodies are written as text: describing such a value is exactly what overflows the stack.
const deep = '['.repeat(DEPTH) + ']'.repeat(DEPTH);
const deepObject = '{"a":'.repeat(DEPTH) + '1' + '}'.repeat(DEPTH);
const huge = JSON.stringify('x'.repeat(2 * 1024 * 1024));
const PLACEHOLDER = '@@value@@';
const VALUE = JSON.stringify(PLACEHOLDER);

let sluice: InProcessDaemon;
let sessionId: string;

/** POSTs `body` with its `VALUE` placeholder replaced by the JSON text `value`. */
async function post(path: string, body: unknown, value = ''): Promise<{ status: number; text: string }> {
  const response = await fetch(sluice.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body).replace(VALUE, value),
  });
  return { status: response.status, text: await response.text() };
}

beforeAll(async () => {
  sluice = await startInProcess();
  const created = await post('/session', { sessionScope: 'thread' });
  sessionId = JSON.parse(created.text).sessionId;
});
afterAll(async () => {
  await sluice?.stop();
});

const cases = (): Array<[string, string, (value: unknown) => unknown]> => [
  ['cwd on POST /session', '/session', (v) => ({ cwd: v })],
  ['sessionScope on POST /session', '/session', (v) => ({ sessionScope: v })],
  ['sessionId on POST /session', '/session', (v) => ({ sessionId: v })],
  ['cwd on /load', `/session/${sessionId}/load`, (v) => ({ cwd: v })],
  ['cwd on /resume', `/session/${sessionId}/resume`, (v) => ({ cwd: v })],
  ['branch name', `/session/${sessionId}/branch`, (v) => ({ name: v })],
  ['permission outcome (session route)', `/session/${sessionId}/permission/req-1`, (v) => ({ outcome: v })],
  ['permission outcome.outcome', '/permission/req-1', (v) => ({ outcome: { outcome: v } })],
  ['optionId', '/permission/req-1', (v) => ({ outcome: { outcome: 'selected', optionId: v } })],
  [
    'prompt deadlineMs',
    `/session/${sessionId}/prompt`,
    (v) => ({ prompt: [{ type: 'text', text: 'hi' }], deadlineMs: v }),
  ],
  ['prompt blocks', `/session/${sessionId}/prompt`, (v) => ({ prompt: v })],
];

describe('a deeply nested or huge body field gets the route’s 4xx, never a 500', () => {
  it.each([
    ['nested arrays', deep],
    ['nested objects', deepObject],
  ])('%s, on every route that takes input', async (_name, value) => {
    for (const [label, path, wrap] of cases()) {
      const { status, text } = await post(path, wrap(PLACEHOLDER), value);
      expect.soft(status, `${label}: ${text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
      expect.soft(status, `${label}: ${text.slice(0, 200)}`).toBeLessThan(500);
      expect.soft(JSON.parse(text).code, label).toEqual(expect.any(String));
      expect.soft(text.length, label).toBeLessThan(2_000);
    }
  });

  it('quotes at most a bounded prefix of a megabyte-long value', async () => {
    for (const [label, path, wrap] of cases()) {
      const { status, text } = await post(path, wrap(PLACEHOLDER), huge);
      expect.soft(status, label).toBeLessThan(500);
      expect.soft(text.length, `${label} echoed ${text.length} bytes`).toBeLessThan(2_000);
    }
  });
});
