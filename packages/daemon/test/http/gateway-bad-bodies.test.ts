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

// `tools` of 1 KiB and more is kept as the bytes sent, its depth read off them
// (docs/decisions/042): the bound is the same as for a member read into objects.
test.each(['metadata', 'tools'])(
  'a %s member of 1 KiB is served up to the 128 levels of the bound and refused one deeper',
  async (member) => {
    const at = (depth: number) =>
      api(sluice.url, 'POST', '/v1/chat/completions', {
        // The body, the member's object, then `depth` levels: depth + 2 in all.
        body: {
          model: 'echo-1',
          messages: [{ role: 'user', content: 'hi' }],
          [member]: { pad: 'x'.repeat(1_100), a: nested(depth) },
        },
      });
    expect((await at(126)).status).toBe(200);
    const refused = await at(127);
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/more than 128 levels/);
  },
);
