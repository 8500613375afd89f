import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DaemonTap } from '../../src/observe/index.js';
import { api } from '../helpers/http-client.js';
import { signIn } from '../helpers/dashboard-sign-in.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// /metrics and /dashboard behind the API's gates (PROTOCOL §2): bearer token, Host, Origin; the
// dashboard's browser cookie on its routes only (its sign-in: dashboard-sign-in.test.ts).

const TOKEN = 'observe-test-token';

interface FirstEvent {
  status: number;
  event?: string;
  data?: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** The status and first SSE event of `GET path`, then the connection is dropped. */
function firstEvent(base: string, path: string, headers: Record<string, string> = {}): Promise<FirstEvent> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, base), { headers, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return resolve({ status: res.statusCode ?? 0 });
      }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        const match = /event: (\S+)\ndata: (.*)\n\n/.exec(text);
        if (match === null) return;
        req.destroy();
        resolve({ status: 200, event: match[1], data: JSON.parse(match[2]!) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('with a token', () => {
  let sluice: InProcessDaemon;
  beforeAll(async () => {
    sluice = await startInProcess({}, { tap: new DaemonTap() }, { token: TOKEN });
  });
  afterAll(() => sluice.stop());
  const bearer = { authorization: `Bearer ${TOKEN}` };

  test('GET /metrics needs the bearer token like the API', async () => {
    expect((await api(sluice.url, 'GET', '/metrics')).status).toBe(401);
    expect((await api(sluice.url, 'GET', '/metrics?token=' + TOKEN)).status).toBe(401);
    const scraped = await api(sluice.url, 'GET', '/metrics', { headers: bearer });
    expect(scraped.status).toBe(200);
    expect(scraped.text).toContain('sluice_prompts_admitted_total 0');
  });

  test('GET /dashboard without credentials answers 401 with a sign-in form that POSTs, never the page', async () => {
    const res = await api(sluice.url, 'GET', '/dashboard');
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('<form method="post" action="/dashboard/sign-in">');
    expect(res.text).toContain('<input type="password" name="token"');
    expect(res.text).not.toContain('EventSource');
  });

  test('a signed-in browser gets the page, pinned by its Content-Security-Policy', async () => {
    const page = await api(sluice.url, 'GET', '/dashboard', {
      headers: { cookie: await signIn(sluice.url, TOKEN) },
    });
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'; script-src 'sha256-/);
    expect(page.text).toContain("new EventSource('/dashboard/stream')");
  });

  test('a wrong cookie is refused on the dashboard routes', async () => {
    expect(
      (await firstEvent(sluice.url, '/dashboard/stream', { cookie: 'sluice_dashboard=forged' })).status,
    ).toBe(401);
    expect(
      (await api(sluice.url, 'GET', '/dashboard', { headers: { cookie: 'sluice_dashboard=1.x' } })).status,
    ).toBe(401);
  });

  test('the dashboard cookie opens no other route, and ?token= opens none', async () => {
    const cookie = { cookie: await signIn(sluice.url, TOKEN) };
    expect((await api(sluice.url, 'GET', '/capabilities', { headers: cookie })).status).toBe(401);
    expect((await api(sluice.url, 'GET', `/capabilities?token=${TOKEN}`)).status).toBe(401);
    expect((await api(sluice.url, 'GET', '/metrics', { headers: cookie })).status).toBe(401);
  });

  test('the stream takes the cookie or the bearer header', async () => {
    const cookie = await signIn(sluice.url, TOKEN);
    for (const headers of [{ cookie }, bearer]) {
      const first = await firstEvent(sluice.url, '/dashboard/stream', headers);
      expect(first.status).toBe(200);
      expect(first.event).toBe('snapshot');
      expect(first.data.scheduler.limits.maxConcurrency).toBe(4);
    }
  });

  test('the dashboard keeps the Host and Origin gates', async () => {
    const cookie = await signIn(sluice.url, TOKEN);
    const foreignOrigin = { cookie, origin: 'http://evil.example' };
    expect((await firstEvent(sluice.url, '/dashboard/stream', foreignOrigin)).status).toBe(403);
    const rebound = await api(sluice.url, 'GET', '/dashboard', { headers: { host: 'evil.example', cookie } });
    expect(rebound.status).toBe(403);
  });
});

describe('without a tap', () => {
  let sluice: InProcessDaemon;
  beforeAll(async () => {
    sluice = await startInProcess();
  });
  afterAll(() => sluice.stop());

  test('neither /metrics nor /dashboard is served', async () => {
    expect((await api(sluice.url, 'GET', '/metrics')).status).toBe(404);
    expect((await api(sluice.url, 'GET', '/dashboard')).status).toBe(404);
    expect((await api(sluice.url, 'GET', '/dashboard/stream')).status).toBe(404);
  });
});

describe('an open loopback daemon', () => {
  let sluice: InProcessDaemon;
  beforeAll(async () => {
    sluice = await startInProcess({}, { tap: new DaemonTap() });
  });
  afterAll(() => sluice.stop());

  test('serves the page and its stream without credentials, like the API', async () => {
    expect((await api(sluice.url, 'GET', '/dashboard')).status).toBe(200);
    const first = await firstEvent(sluice.url, '/dashboard/stream');
    expect(first).toMatchObject({ status: 200, event: 'snapshot' });
    expect(first.data.sessions).toEqual({
      count: 0,
      pendingPrompts: 0,
      top: [],
      maxPendingPromptsPerSession: 5,
    });
  });
});
