import { DaemonClient as OfficialDaemonClient } from '@qwen-code/sdk/daemon';
import { DaemonClient, DaemonHttpError } from '@sluice/sdk';
import { afterEach, describe, expect, test } from 'vitest';
import type { ServerOptions } from '../../src/http/server.js';
import { DaemonTap } from '../../src/observe/index.js';
import { INITIALIZE } from '../helpers/acp-client.js';
import { api, textPrompt, type ApiResponse } from '../helpers/http-client.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// Issue 28 item 7: `--rate-limit` counts each client's requests per tier (prompt, mutation,
// read) in a window on the daemon's clock, over real sockets on loopback; a request past its
// tier's limit is `429 rate_limit_exceeded` with `Retry-After`, and the exempt routes never are.

const LIMITS = { prompt: 2, mutation: 3, read: 4 };
const WINDOW_MS = 60_000;
const TOKEN = 'rate-limit-test-token';
const auth = { authorization: `Bearer ${TOKEN}` };

const clock = { now: Date.UTC(2026, 0, 1) };
const running: InProcessDaemon[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((daemon) => daemon.stop()));
});

/** A daemon with a token and the test's limits, its windows on the test's clock. */
async function limited(server: Partial<ServerOptions> = {}): Promise<InProcessDaemon> {
  const daemon = await startInProcess(
    {},
    { tap: new DaemonTap() },
    {
      token: TOKEN,
      now: () => clock.now,
      rateLimit: { limits: LIMITS, windowMs: WINDOW_MS },
      ...server,
    },
  );
  running.push(daemon);
  return daemon;
}

/** `method path` with the token, `times` times in a row; the statuses. */
async function statuses(
  sluice: InProcessDaemon,
  method: string,
  path: string,
  times: number,
  options: { body?: unknown; headers?: Record<string, string>; streamHead?: boolean } = {},
): Promise<number[]> {
  const answers: number[] = [];
  for (let i = 0; i < times; i++)
    answers.push(
      (await api(sluice.url, method, path, { ...options, headers: { ...auth, ...options.headers } })).status,
    );
  return answers;
}

/** A session created with the token (one request of the mutation tier). */
async function createSession(sluice: InProcessDaemon): Promise<string> {
  const created = await api(sluice.url, 'POST', '/session', { body: {}, headers: auth });
  expect(created.status).toBe(200);
  return created.body.sessionId as string;
}

/** A refusal of `tier` whose window ends in `retryAfterMs`: `Retry-After` is that in whole seconds, up. */
function expectRefusal(res: ApiResponse, tier: string, limit: number, retryAfterMs: number): void {
  const retryAfterS = Math.ceil(retryAfterMs / 1000);
  expect(res.status).toBe(429);
  expect(res.headers['retry-after']).toBe(String(retryAfterS));
  expect(res.body).toEqual({
    error: `Rate limit of the ${tier} tier reached: ${limit} requests per 60 s per client; retry in ${retryAfterS} s`,
    code: 'rate_limit_exceeded',
    tier,
    limit,
    windowMs: WINDOW_MS,
    retryAfterMs,
  });
}

describe('issue 28 item 7: per-client rate limits by tier', () => {
  test('prompt tier: the third prompt of a window is 429 with Retry-After, and the window end reopens it', async () => {
    const sluice = await limited();
    const sessionId = await createSession(sluice);
    const path = `/session/${sessionId}/prompt`;
    expect(await statuses(sluice, 'POST', path, 2, { body: textPrompt('hi') })).toEqual([202, 202]);
    clock.now += 15_000;
    expectRefusal(
      await api(sluice.url, 'POST', path, { body: textPrompt('hi'), headers: auth }),
      'prompt',
      2,
      45_000,
    );
    clock.now += 44_999;
    expectRefusal(
      await api(sluice.url, 'POST', path, { body: textPrompt('hi'), headers: auth }),
      'prompt',
      2,
      1,
    );
    clock.now += 1;
    expect(await statuses(sluice, 'POST', path, 3, { body: textPrompt('hi') })).toEqual([202, 202, 429]);
  });

  test('mutation tier: POST and DELETE count together; the fourth of a window is 429', async () => {
    const sluice = await limited();
    const sessionId = await createSession(sluice);
    expect(await statuses(sluice, 'POST', `/session/${sessionId}/cancel`, 1)).toEqual([204]);
    expect((await api(sluice.url, 'DELETE', `/session/${sessionId}`, { headers: auth })).status).toBe(204);
    expectRefusal(
      await api(sluice.url, 'POST', '/session', { body: {}, headers: auth }),
      'mutation',
      3,
      60_000,
    );
  });

  test('read tier: the fifth GET of a window is 429, whatever route it asks', async () => {
    const sluice = await limited();
    expect(await statuses(sluice, 'GET', '/capabilities', 2)).toEqual([200, 200]);
    expect(await statuses(sluice, 'GET', '/openapi.json', 2)).toEqual([200, 200]);
    clock.now += 30_000;
    expectRefusal(await api(sluice.url, 'GET', '/runtime/snapshot', { headers: auth }), 'read', 4, 30_000);
  });

  test('the tiers count apart: spent reads refuse neither prompts nor changes', async () => {
    const sluice = await limited();
    expect(await statuses(sluice, 'GET', '/capabilities', 5)).toEqual([200, 200, 200, 200, 429]);
    const sessionId = await createSession(sluice);
    expect(
      await statuses(sluice, 'POST', `/session/${sessionId}/prompt`, 1, { body: textPrompt('x') }),
    ).toEqual([202]);
  });

  test('each refusal is counted by tier in sluice_http_rate_limited_total', async () => {
    const sluice = await limited();
    expect(await statuses(sluice, 'GET', '/capabilities', 6)).toEqual([200, 200, 200, 200, 429, 429]);
    const sessionId = await createSession(sluice);
    expect(
      await statuses(sluice, 'POST', `/session/${sessionId}/prompt`, 3, { body: textPrompt('x') }),
    ).toEqual([202, 202, 429]);
    const scrape = (await api(sluice.url, 'GET', '/metrics', { headers: auth })).text;
    expect(scrape).toContain('sluice_http_rate_limited_total{tier="read"} 2\n');
    expect(scrape).toContain('sluice_http_rate_limited_total{tier="prompt"} 1\n');
    expect(scrape).not.toContain('sluice_http_rate_limited_total{tier="mutation"}');
  });

  test('both SDKs see a refusal as a 429 with the code and the wait: ours as retryable with retryAfterMs', async () => {
    const sluice = await limited();
    const ours = new DaemonClient({ baseUrl: sluice.url, token: TOKEN });
    for (let i = 0; i < 4; i++) await ours.capabilities();
    clock.now += 20_000;
    const refused = await ours.capabilities().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DaemonHttpError);
    expect(refused).toMatchObject({
      status: 429,
      code: 'rate_limit_exceeded',
      retryable: true,
      retryAfterMs: 40_000,
    });
    const official = new OfficialDaemonClient({ baseUrl: sluice.url, token: TOKEN });
    const theirs = await official.capabilities().catch((error: unknown) => error);
    expect(theirs).toMatchObject({ status: 429, body: { code: 'rate_limit_exceeded', tier: 'read' } });
  });

  test('a client cannot get a fresh count by changing X-Qwen-Client-Id', async () => {
    const sluice = await limited();
    const answers: number[] = [];
    for (let i = 0; i < 6; i++)
      answers.push(
        (
          await api(sluice.url, 'GET', '/capabilities', {
            headers: { ...auth, 'x-qwen-client-id': `client-${i}` },
          })
        ).status,
      );
    expect(answers).toEqual([200, 200, 200, 200, 429, 429]);
  });

  test('each network address is a client of its own: 127.0.0.2 keeps its reads when 127.0.0.1 spent its own', async () => {
    const sluice = await limited();
    expect(await statuses(sluice, 'GET', '/capabilities', 5)).toEqual([200, 200, 200, 200, 429]);
    const other = await api(sluice.url, 'GET', '/capabilities', { headers: auth, localAddress: '127.0.0.2' });
    expect(other.status).toBe(200);
  });

  test('requests the security gate refuses do not count: a stranger cannot spend a client’s allowance', async () => {
    const sluice = await limited();
    const refused = await statuses(sluice, 'GET', '/capabilities', 10, {
      headers: { authorization: 'Bearer wrong' },
    });
    expect(refused).toEqual(Array(10).fill(401));
    expect(await statuses(sluice, 'GET', '/capabilities', 4)).toEqual([200, 200, 200, 200]);
  });

  test('health, event streams, heartbeats, /acp, the model gateway and /metrics are never refused', async () => {
    const sluice = await limited();
    const sessionId = await createSession(sluice);
    const times = 8; // twice the largest limit
    const exempt = [
      ...(await statuses(sluice, 'GET', '/health', times)),
      ...(await statuses(sluice, 'GET', `/session/${sessionId}/events`, times, { streamHead: true })),
      ...(await statuses(sluice, 'POST', `/session/${sessionId}/heartbeat`, times)),
      ...(await statuses(sluice, 'POST', '/acp', times, {
        body: { jsonrpc: '2.0', id: 0, method: 'initialize', params: INITIALIZE },
      })),
      ...(await statuses(sluice, 'GET', '/v1/models', times)),
      ...(await statuses(sluice, 'POST', '/v1/chat/completions', times, {
        body: { messages: [{ role: 'user', content: 'hello' }] },
      })),
      ...(await statuses(sluice, 'GET', '/metrics', times)),
    ];
    expect(exempt.filter((status) => status !== 200)).toEqual([]);
    // Those requests spent nothing: the tiers are whole.
    expect(await statuses(sluice, 'GET', '/capabilities', 4)).toEqual([200, 200, 200, 200]);
  });

  test('/capabilities advertises rate_limit and the limits; without --rate-limit it does not and nothing is limited', async () => {
    const sluice = await limited();
    const capabilities = (await api(sluice.url, 'GET', '/capabilities', { headers: auth })).body;
    expect(capabilities.features).toContain('rate_limit');
    expect(capabilities.limits.rateLimit).toEqual({ ...LIMITS, windowMs: WINDOW_MS });

    const open = await startInProcess({}, {}, { token: TOKEN });
    running.push(open);
    const reads: number[] = [];
    for (let i = 0; i < 10; i++)
      reads.push((await api(open.url, 'GET', '/capabilities', { headers: auth })).status);
    expect(reads).toEqual(Array(10).fill(200));
    const plain = (await api(open.url, 'GET', '/capabilities', { headers: auth })).body;
    expect(plain.features).not.toContain('rate_limit');
    expect(plain.limits.rateLimit).toBeUndefined();
  });

  test('invalid limits refuse to build the server, naming the value', async () => {
    await expect(
      limited({ rateLimit: { limits: { ...LIMITS, read: 0 }, windowMs: WINDOW_MS } }),
    ).rejects.toThrow('rate limit of the read tier must be an integer in [1, 1000000], got 0');
    await expect(limited({ rateLimit: { limits: LIMITS, windowMs: 999 } })).rejects.toThrow(
      'rate limit window (ms) must be an integer in [1000, 86400000], got 999',
    );
  });
});
