import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DaemonTap } from '../../src/observe/index.js';
import { postSignIn, signIn } from '../helpers/dashboard-sign-in.js';
import { api } from '../helpers/http-client.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// Issue 31 item 1: the web client at `/` signs a browser in with the dashboard's rules (a form
// POST, an expiring signed cookie, no token in a URL), and its cookie opens the API to the page
// — a change only with an Origin header, so another site cannot make the browser act (CSRF).

const TOKEN = 'web-sign-in-test-token';
const bearer = { authorization: `Bearer ${TOKEN}` };
const SIGN_IN = '/web/sign-in';

let sluice: InProcessDaemon;
let cookie: string;
beforeAll(async () => {
  sluice = await startInProcess({}, { tap: new DaemonTap() }, { token: TOKEN });
  cookie = await signIn(sluice.url, TOKEN, SIGN_IN);
});
afterAll(() => sluice.stop());

describe('issue 31: signing in to the web client', () => {
  test('GET / without credentials answers the sign-in form (401) that POSTs to /web/sign-in', async () => {
    const res = await api(sluice.url, 'GET', '/');
    expect(res.status).toBe(401);
    expect(res.text).toContain('<form method="post" action="/web/sign-in">');
  });

  test('the right token: 303 to / with an HttpOnly SameSite=Strict cookie for the whole daemon', async () => {
    const res = await postSignIn(sluice.url, TOKEN, {}, SIGN_IN);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/');
    expect(res.headers['set-cookie']![0]).toMatch(
      /^sluice_web=\d+\.[A-Za-z0-9_-]{43}; Max-Age=43200; Path=\/; HttpOnly; SameSite=Strict$/,
    );
    const page = await api(sluice.url, 'GET', '/', { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).not.toContain('unsafe-inline');
  });

  test('a wrong token: the form again, 401, no cookie', async () => {
    const res = await postSignIn(sluice.url, 'wrong', {}, SIGN_IN);
    expect(res.status).toBe(401);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.text).toContain('That is not this daemon’s token');
  });

  test('?token= on / is 400 token_in_url and the token is not echoed', async () => {
    const res = await api(sluice.url, 'GET', `/?token=${TOKEN}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('token_in_url');
    expect(res.text).not.toContain(TOKEN);
  });

  test('the cookie opens the API for reads, and for changes only with an Origin header (CSRF)', async () => {
    expect((await api(sluice.url, 'GET', '/capabilities', { headers: { cookie } })).status).toBe(200);
    const body = { sessionScope: 'thread' };
    const bare = await api(sluice.url, 'POST', '/session', { body, headers: { cookie } });
    expect(bare.status).toBe(403);
    expect(bare.body.code).toBe('cross_site_request');
    expect(bare.body.error).toContain('Origin');
    const foreign = { cookie, origin: 'http://evil.example' };
    expect((await api(sluice.url, 'POST', '/session', { body, headers: foreign })).status).toBe(403);
    const own = { cookie, origin: sluice.url };
    expect((await api(sluice.url, 'POST', '/session', { body, headers: own })).status).toBe(200);
  });

  test('a forged or absent cookie opens nothing; the dashboard cookie does not open the API', async () => {
    const forged = { cookie: 'sluice_web=1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' };
    expect((await api(sluice.url, 'GET', '/capabilities', { headers: forged })).status).toBe(401);
    const dashboard = await signIn(sluice.url, TOKEN);
    expect((await api(sluice.url, 'GET', '/capabilities', { headers: { cookie: dashboard } })).status).toBe(
      401,
    );
  });

  test('revoking takes the bearer token only, and makes every web cookie fail', async () => {
    const own = { cookie, origin: sluice.url };
    expect((await api(sluice.url, 'POST', '/web/revoke', { headers: own })).status).toBe(401);
    expect((await api(sluice.url, 'POST', '/dashboard/revoke', { headers: own })).status).toBe(401);
    expect((await api(sluice.url, 'POST', '/web/revoke', { headers: bearer })).status).toBe(204);
    expect((await api(sluice.url, 'GET', '/capabilities', { headers: { cookie } })).status).toBe(401);
    cookie = await signIn(sluice.url, TOKEN, SIGN_IN);
  });

  test('sign-out clears the cookie and goes back to /', async () => {
    const res = await api(sluice.url, 'POST', '/web/sign-out', { headers: { origin: sluice.url } });
    expect(res.status).toBe(303);
    expect(res.headers['set-cookie']![0]).toBe('sluice_web=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict');
  });
});

describe('issue 31: --no-web', () => {
  test('a daemon without the web client serves neither / nor its files nor its sign-in', async () => {
    const off = await startInProcess({}, {}, { web: false });
    try {
      expect((await api(off.url, 'GET', '/')).status).toBe(404);
      expect((await api(off.url, 'GET', '/web/assets/app.js')).status).toBe(404);
      expect((await postSignIn(off.url, 'x', {}, SIGN_IN)).status).toBe(404);
    } finally {
      await off.stop();
    }
  });

  test('the page loads its script and styles from this daemon, and nothing else on disk', async () => {
    const open = await startInProcess();
    try {
      const script = await api(open.url, 'GET', '/web/assets/app.js');
      expect(script.status).toBe(200);
      expect(script.headers['content-type']).toContain('text/javascript');
      expect((await api(open.url, 'GET', '/web/assets/app.css')).headers['content-type']).toContain(
        'text/css',
      );
      expect((await api(open.url, 'GET', '/web/assets/..%2Fbundle%2Fsluice.cjs')).status).toBe(404);
      expect((await api(open.url, 'GET', '/web/assets/nope.js')).status).toBe(404);
    } finally {
      await open.stop();
    }
  });
});
