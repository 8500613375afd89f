import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BROWSER_COOKIE_MAX_AGE_MS } from '../../src/http/browser-cookie.js';
import { DaemonTap } from '../../src/observe/index.js';
import { postSignIn, signIn } from '../helpers/dashboard-sign-in.js';
import { api } from '../helpers/http-client.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// Issue 28 item 3, "Tokens in URLs and a cookie for ever": the dashboard signs a browser in by a
// form POST, never takes a token from a URL, and its cookie expires (injected clock), is keyed
// by this daemon's token and start, and can be revoked.

const TOKEN = 'sign-in-test-token';
const clock = { now: Date.UTC(2026, 0, 1) };
const bearer = { authorization: `Bearer ${TOKEN}` };

/** Every line the daemon logged: requests at debug, failures at error. */
const logged: string[] = [];
const log = (fields: Record<string, unknown>, message: string): void => {
  logged.push(`${message} ${JSON.stringify(fields)}`);
};

let sluice: InProcessDaemon;
beforeAll(async () => {
  sluice = await startInProcess(
    {},
    { tap: new DaemonTap() },
    { token: TOKEN, now: () => clock.now, requestLog: { debug: log }, logger: { error: log } },
  );
});
afterAll(() => sluice.stop());

/** The status of `GET /dashboard/stream` with `cookie`; the stream is not read. */
async function streamStatus(cookie: string): Promise<number> {
  return (await api(sluice.url, 'GET', '/dashboard/stream', { headers: { cookie }, streamHead: true }))
    .status;
}

describe('issue 28 item 3: the dashboard sign-in', () => {
  test('POST /dashboard/sign-in with the right token: 303 to /dashboard with an expiring HttpOnly SameSite=Strict cookie', async () => {
    const res = await postSignIn(sluice.url, TOKEN);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/dashboard');
    const [set] = res.headers['set-cookie']!;
    expect(set).toMatch(
      /^sluice_dashboard=\d+\.[A-Za-z0-9_-]{43}; Max-Age=43200; Path=\/dashboard; HttpOnly; SameSite=Strict$/,
    );
    expect(set).not.toContain(TOKEN);
    expect(await streamStatus(set!.split(';', 1)[0]!)).toBe(200);
  });

  test('a wrong token answers the sign-in page again with 401, a clear message and no cookie', async () => {
    const res = await postSignIn(sluice.url, 'not-the-token');
    expect(res.status).toBe(401);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.text).toContain('That is not this daemon’s token');
    expect(res.text).toContain('<form method="post" action="/dashboard/sign-in">');
    expect(res.text).not.toContain('not-the-token');
  });

  test('a sign-in that is not a form is 415 unsupported_media_type', async () => {
    const res = await api(sluice.url, 'POST', '/dashboard/sign-in', { body: { token: TOKEN } });
    expect(res.status).toBe(415);
    expect(res.body.code).toBe('unsupported_media_type');
  });

  test('the sign-in keeps the Origin gate: same-origin form posts pass, foreign ones are 403', async () => {
    expect((await postSignIn(sluice.url, TOKEN, { origin: sluice.url })).status).toBe(303);
    expect((await postSignIn(sluice.url, TOKEN, { origin: 'http://evil.example' })).status).toBe(403);
  });

  test('?token= is refused on /dashboard and /dashboard/stream: 400 token_in_url, the token never echoed', async () => {
    for (const path of [
      `/dashboard?token=${TOKEN}`,
      `/dashboard/stream?token=${TOKEN}`,
      '/dashboard?x=1&token=w',
    ]) {
      const res = await api(sluice.url, 'GET', path, { headers: bearer });
      expect(res.status, path).toBe(400);
      expect(res.body.code).toBe('token_in_url');
      expect(res.body.error).toMatch(/POSTs it to \/dashboard\/sign-in/);
      expect(res.text).not.toContain(TOKEN);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    expect(logged.some((line) => line.includes('"status":400'))).toBe(true);
    expect(logged.filter((line) => line.includes(TOKEN))).toEqual([]);
  });

  test('a cookie past 12 hours is refused by the server; the page asks to sign in again', async () => {
    const cookie = await signIn(sluice.url, TOKEN);
    const start = clock.now;
    try {
      clock.now = start + BROWSER_COOKIE_MAX_AGE_MS - 1000;
      expect(await streamStatus(cookie)).toBe(200);
      clock.now = start + BROWSER_COOKIE_MAX_AGE_MS;
      expect(await streamStatus(cookie)).toBe(401);
      const page = await api(sluice.url, 'GET', '/dashboard', { headers: { cookie } });
      expect(page.status).toBe(401);
      expect(page.text).toContain('name="token"');
    } finally {
      clock.now = start;
    }
  });

  test('POST /dashboard/revoke (bearer only) makes every issued cookie fail; signing in again works', async () => {
    const first = await signIn(sluice.url, TOKEN);
    const second = await signIn(sluice.url, TOKEN);
    const byCookie = await api(sluice.url, 'POST', '/dashboard/revoke', { headers: { cookie: first } });
    expect(byCookie.status).toBe(401);
    expect(await streamStatus(first)).toBe(200);
    expect((await api(sluice.url, 'POST', '/dashboard/revoke', { headers: bearer })).status).toBe(204);
    expect(await streamStatus(first)).toBe(401);
    expect(await streamStatus(second)).toBe(401);
    expect(await streamStatus(await signIn(sluice.url, TOKEN))).toBe(200);
  });

  test('POST /dashboard/sign-out clears the browser cookie', async () => {
    const res = await api(sluice.url, 'POST', '/dashboard/sign-out', {
      headers: { cookie: await signIn(sluice.url, TOKEN) },
    });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/dashboard');
    expect(res.headers['set-cookie']).toEqual([
      'sluice_dashboard=; Max-Age=0; Path=/dashboard; HttpOnly; SameSite=Strict',
    ]);
  });

  test("a cookie from a daemon with another token, or from this token's earlier start, fails", async () => {
    const cookie = await signIn(sluice.url, TOKEN);
    for (const token of ['another-token', TOKEN]) {
      const other = await startInProcess({}, { tap: new DaemonTap() }, { token, now: () => clock.now });
      try {
        const res = await api(other.url, 'GET', '/dashboard/stream', {
          headers: { cookie },
          streamHead: true,
        });
        expect(res.status, token).toBe(401);
      } finally {
        await other.stop();
      }
    }
  });
});

describe('an open loopback daemon', () => {
  let open: InProcessDaemon;
  beforeAll(async () => {
    open = await startInProcess({}, { tap: new DaemonTap() });
  });
  afterAll(() => open.stop());

  test('refuses ?token= too, and its sign-in sets no cookie', async () => {
    const res = await api(open.url, 'GET', '/dashboard?token=anything');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('token_in_url');
    const signedIn = await postSignIn(open.url, 'anything');
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers['set-cookie']).toBeUndefined();
  });
});
