import { afterAll, beforeAll, expect, test } from 'vitest';
import { api } from '../helpers/http-client.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// Issue 28.4: a pass-through field of a /v1 body nested 256 deep answered 500 server_error (a
// TypeError from the request-size count); it is the client's mistake, and says so.

let sluice: InProcessDaemon;
beforeAll(async () => {
  sluice = await startInProcess();
});
afterAll(() => sluice?.stop());

/** `{"a":{"a":…{"a":1}}}`, `depth` objects deep. */
function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

test.each([256, 1_000])(
  'a pass-through field nested %i deep is a 400 invalid_request_error, not a 500',
  async (depth) => {
    const res = await api(sluice.url, 'POST', '/v1/chat/completions', {
      body: { model: 'echo-1', messages: [{ role: 'user', content: 'hi' }], metadata: nested(depth) },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.type).toBe('invalid_request_error');
    expect(res.body.error.message).toMatch(/nest/);
  },
);

test('a body nested well within the bound is served', async () => {
  const res = await api(sluice.url, 'POST', '/v1/chat/completions', {
    body: { model: 'echo-1', messages: [{ role: 'user', content: 'hi' }], metadata: nested(32) },
  });
  expect(res.status).toBe(200);
});
