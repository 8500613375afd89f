import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { api } from '../helpers/http-client.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

// Bad input gets a 4xx with a stable code, never a 500: random JSON bodies, ids, query strings
// and client ids against every route that takes input, over real HTTP on the started CLI.

let sluice: SluiceProcess;
let sessionId: string;
beforeAll(async () => {
  sluice = await startSluice(['--echo-delay-ms', '5']);
  sessionId = (await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread' } })).body
    .sessionId;
});
afterAll(async () => {
  await sluice?.stop();
});

const segment = fc.oneof(
  fc.constant('SESSION'),
  fc.uuid(),
  fc.string({ maxLength: 12 }).map((s) => encodeURIComponent(s) || 'x'),
);
const route = fc.oneof(
  fc.constantFrom(
    ['POST', '/session'],
    ['POST', '/session/:id/prompt'],
    ['POST', '/session/:id/cancel'],
    ['POST', '/session/:id/branch'],
    ['POST', '/session/:id/load'],
    ['POST', '/session/:id/resume'],
    ['POST', '/session/:id/heartbeat'],
    ['POST', '/session/:id/detach'],
    ['POST', '/session/:id/permission/:id'],
    ['POST', '/permission/:id'],
    ['GET', '/session/:id/status'],
    ['GET', '/session/:id/pending-prompts'],
    ['DELETE', '/session/:id/pending-prompts/:id'],
    ['GET', '/workspace/:id/sessions'],
  ),
);
const body = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.record(
    {
      prompt: fc.oneof(
        fc.jsonValue({ maxDepth: 3 }),
        fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
      ),
      deadlineMs: fc.jsonValue({ maxDepth: 1 }),
      cwd: fc.oneof(fc.string(), fc.jsonValue({ maxDepth: 1 })),
      sessionScope: fc.jsonValue({ maxDepth: 1 }),
      sessionId: fc.jsonValue({ maxDepth: 1 }),
      outcome: fc.jsonValue({ maxDepth: 2 }),
      name: fc.jsonValue({ maxDepth: 1 }),
    },
    { requiredKeys: [] },
  ),
);
const query = fc.option(
  fc.record(
    {
      size: fc.string({ maxLength: 6 }),
      cursor: fc.string({ maxLength: 8 }),
      maxQueued: fc.string({ maxLength: 6 }),
    },
    { requiredKeys: [] },
  ),
  { nil: undefined },
);
const clientId = fc.option(
  fc.string({ maxLength: 140 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
  { nil: undefined },
);

const REFUSALS = ['prompt_queue_full', 'session_limit_exceeded'];

test('bad input on any route answers with an error body and a 4xx, never a 500', async () => {
  await fc.assert(
    fc.asyncProperty(
      route,
      fc.array(segment, { minLength: 2, maxLength: 2 }),
      body,
      query,
      clientId,
      async ([method, template], ids, json, q, client) => {
        let index = 0;
        const path = template.replace(/:id/g, () => {
          const id = ids[index++]!;
          return id === 'SESSION' ? sessionId : id;
        });
        const search = q ? `?${new URLSearchParams(q as Record<string, string>).toString()}` : '';
        const res = await api(sluice.url, method as 'GET' | 'POST' | 'DELETE', path + search, {
          ...(method === 'GET' ? {} : { body: json }),
          ...(client === undefined ? {} : { headers: { 'x-qwen-client-id': client } }),
        });
        // 503 is a refusal the protocol documents (a full queue, the session cap), never a failure
        const refusal = res.status === 503 && REFUSALS.includes(res.body?.code);
        if (!refusal) expect(res.status, `${method} ${path}${search} → ${res.text}`).toBeLessThan(500);
        if (res.status >= 400) expect(typeof res.body?.error, res.text).toBe('string');
      },
    ),
    { numRuns: 300 },
  );
});
