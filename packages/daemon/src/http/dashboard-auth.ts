import { CodedError } from '@sluice/protocol';
import type { FastifyReply } from 'fastify';
import { BrowserCookie } from './browser-cookie.js';

// How a browser signs in to the dashboard when the daemon has a token (docs/security.md,
// docs/decisions/032): an EventSource cannot send an Authorization header. The sign-in form
// POSTs the token to `/dashboard/sign-in`, which answers a 303 to `/dashboard` with a signed,
// expiring cookie (http/browser-cookie.ts) scoped to `/dashboard`; the stream authenticates by
// it. A token is never taken from a URL: `?token=` on the dashboard's routes is a 400.

/** The dashboard page; its stream and its sign-in routes are below it. */
export const DASHBOARD_PATH = '/dashboard';
/** Where the sign-in form posts the token (`application/x-www-form-urlencoded`, field `token`). */
export const DASHBOARD_SIGN_IN_PATH = '/dashboard/sign-in';
/** Where a browser posts to drop its cookie. */
export const DASHBOARD_SIGN_OUT_PATH = '/dashboard/sign-out';
/** Where an operator (bearer token only) posts to invalidate every issued cookie. */
export const DASHBOARD_REVOKE_PATH = '/dashboard/revoke';
/** The cookie that carries the dashboard's credential. */
export const DASHBOARD_COOKIE = 'sluice_dashboard';

/** Whether `path` (no query) is one of the dashboard's routes. */
export function isDashboardPath(path: string): boolean {
  return path === DASHBOARD_PATH || path.startsWith(`${DASHBOARD_PATH}/`);
}

/**
 * The dashboard's cookie for a daemon with `token`: `Secure` when the daemon serves HTTPS
 * (docs/decisions/034); `now` is the wall clock (tests inject one).
 */
export function dashboardCookie(
  token: string,
  options: { secure: boolean; now?: (() => number) | undefined },
): BrowserCookie {
  return new BrowserCookie({ name: DASHBOARD_COOKIE, path: DASHBOARD_PATH, token, ...options });
}

/** Whether the query of `url` has a `token` parameter (its value is never read). */
export function hasQueryToken(url: string): boolean {
  const query = url.indexOf('?');
  return query >= 0 && new URLSearchParams(url.slice(query + 1)).has('token');
}

/** The refusal of a token in a dashboard URL; the message never repeats the URL. */
export function tokenInUrlError(): CodedError<'token_in_url'> {
  return new CodedError(
    'token_in_url',
    `The dashboard takes no token in its URL (it would stay in history and logs): sign in with the form, which POSTs it to ${DASHBOARD_SIGN_IN_PATH}, or send Authorization: Bearer`,
  );
}

/**
 * What the security gate does with a dashboard request that has no valid bearer token: `pass`
 * (sign-in and sign-out check nothing the gate knows; a valid cookie), `sign-in` (the form) or
 * `deny` (401). Revoking takes the bearer token only.
 */
export function dashboardAccess(
  method: string,
  path: string,
  cookieHeader: string | undefined,
  cookie: BrowserCookie,
): 'pass' | 'sign-in' | 'deny' {
  if (method === 'POST' && (path === DASHBOARD_SIGN_IN_PATH || path === DASHBOARD_SIGN_OUT_PATH))
    return 'pass';
  if (path !== DASHBOARD_REVOKE_PATH && cookie.verify(cookieHeader)) return 'pass';
  return path === DASHBOARD_PATH && method === 'GET' ? 'sign-in' : 'deny';
}

const signInPage = (message: string): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sluice dashboard — sign in</title></head>
<body><h1>Sluice dashboard</h1><p role="status">${message}</p>
<form method="post" action="${DASHBOARD_SIGN_IN_PATH}"><label>Token <input type="password" name="token" autocomplete="current-password" required autofocus></label>
<button type="submit">Sign in</button></form></body></html>
`;

/** What the sign-in page says: asked for the token, or told it was wrong. */
export const SIGN_IN_MESSAGES = {
  ask: 'This daemon requires its bearer token.',
  wrong: 'That is not this daemon’s token. Check it and sign in again.',
} as const;

/** Answers a browser without credentials: 401 with the form that POSTs the token. */
export function sendDashboardLogin(
  reply: FastifyReply,
  message: keyof typeof SIGN_IN_MESSAGES = 'ask',
): void {
  void reply
    .code(401)
    .header('WWW-Authenticate', 'Bearer')
    .header('Content-Security-Policy', "default-src 'none'; form-action 'self'; frame-ancestors 'none'")
    .header('Cache-Control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(signInPage(SIGN_IN_MESSAGES[message]));
}
