import { describe, expect, test } from 'vitest';
import { BROWSER_COOKIE_MAX_AGE_MS, BrowserCookie } from '../../src/http/browser-cookie.js';

// Issue 28 item 3: the browser sign-in cookie expires, is keyed by the daemon's token and a key
// drawn at start, and can be revoked. Time is an injected clock.

const TOKEN = 'browser-cookie-token';
const START = Date.UTC(2026, 0, 1);

/** A cookie issuer on a clock the test moves. */
function issuer(token = TOKEN) {
  const clock = { now: START };
  const cookie = new BrowserCookie({ name: 'sluice_test', path: '/test', token, now: () => clock.now });
  return { cookie, clock };
}

/** The `Cookie` header a browser sends back for a `Set-Cookie` value. */
const sentBack = (setCookie: string): string => setCookie.split(';', 1)[0]!;

describe('BrowserCookie', () => {
  test('signs in only with the token, with an HttpOnly SameSite=Strict cookie that expires in 12 h', () => {
    const { cookie } = issuer();
    expect(cookie.signIn('wrong')).toBeUndefined();
    expect(cookie.signIn('')).toBeUndefined();
    const set = cookie.signIn(TOKEN)!;
    expect(set).toMatch(
      /^sluice_test=\d+\.[A-Za-z0-9_-]{43}; Max-Age=43200; Path=\/test; HttpOnly; SameSite=Strict$/,
    );
    expect(set).not.toContain(TOKEN);
    expect(cookie.verify(sentBack(set))).toBe(true);
    expect(cookie.verify(`other=1; ${sentBack(set)}`)).toBe(true);
  });

  test('a cookie past its 12 hours is refused by the server, whatever the browser keeps', () => {
    const { cookie, clock } = issuer();
    const sent = sentBack(cookie.issue());
    clock.now = START + BROWSER_COOKIE_MAX_AGE_MS - 1000;
    expect(cookie.verify(sent)).toBe(true);
    clock.now = START + BROWSER_COOKIE_MAX_AGE_MS;
    expect(cookie.verify(sent)).toBe(false);
  });

  test('the expiry is signed: a cookie with a later expiry written in is refused', () => {
    const { cookie, clock } = issuer();
    const [expires, mac] = sentBack(cookie.issue()).split('=')[1]!.split('.');
    clock.now = START + BROWSER_COOKIE_MAX_AGE_MS;
    expect(cookie.verify(`sluice_test=${Number(expires) + 3600}.${mac}`)).toBe(false);
  });

  test('revoke makes every issued cookie fail; a new sign-in works', () => {
    const { cookie } = issuer();
    const first = sentBack(cookie.issue());
    const second = sentBack(cookie.issue());
    cookie.revoke();
    expect(cookie.verify(first)).toBe(false);
    expect(cookie.verify(second)).toBe(false);
    expect(cookie.verify(sentBack(cookie.signIn(TOKEN)!))).toBe(true);
  });

  test('a cookie from an issuer with another token, or another start with the same token, fails', () => {
    const sent = sentBack(issuer().cookie.issue());
    expect(issuer('another-token').cookie.verify(sent)).toBe(false);
    expect(issuer().cookie.verify(sent)).toBe(false);
  });

  test('clear drops the cookie; garbage and absent cookies are refused', () => {
    const { cookie } = issuer();
    expect(cookie.clear()).toBe('sluice_test=; Max-Age=0; Path=/test; HttpOnly; SameSite=Strict');
    for (const header of [undefined, '', 'sluice_test=', 'sluice_test=forged', 'sluice_test=1.x', 'x=1'])
      expect(cookie.verify(header), String(header)).toBe(false);
  });

  test('Secure is added when asked (a daemon served over TLS)', () => {
    const cookie = new BrowserCookie({ name: 'a', path: '/', token: TOKEN, secure: true });
    expect(cookie.issue()).toMatch(/; Path=\/; HttpOnly; SameSite=Strict; Secure$/);
  });

  test('bad options fail naming the value', () => {
    const make = (options: Partial<ConstructorParameters<typeof BrowserCookie>[0]>) => () =>
      new BrowserCookie({ name: 'a', path: '/', token: TOKEN, ...options });
    expect(make({ name: 'a;b' })).toThrow(/name must be/);
    expect(make({ path: 'x' })).toThrow(/path must start/);
    expect(make({ token: '' })).toThrow(/token must not be empty/);
    expect(make({ maxAgeMs: 10 })).toThrow(/maxAgeMs must be an integer of at least 1000, got 10/);
  });
});
