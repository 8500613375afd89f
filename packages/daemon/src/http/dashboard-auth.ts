import { createHmac } from 'node:crypto';
import type { FastifyReply } from 'fastify';

// How a browser authenticates to the dashboard when the daemon has a token (docs/metrics.md): an
// EventSource cannot send an Authorization header. `GET /dashboard?token=<token>` (typed into
// the login form the page answers with) is accepted on the dashboard's routes only; the page
// then sets an HttpOnly, SameSite=Strict cookie scoped to `/dashboard` and redirects to the
// bare URL, so the token leaves the address bar and the stream authenticates by the cookie.

/** The dashboard page; its stream is below it. */
export const DASHBOARD_PATH = '/dashboard';
/** The cookie that carries the dashboard's credential. */
export const DASHBOARD_COOKIE = 'sluice_dashboard';

/** Whether `path` (no query) is one of the dashboard's routes. */
export function isDashboardPath(path: string): boolean {
  return path === DASHBOARD_PATH || path.startsWith(`${DASHBOARD_PATH}/`);
}

/** The cookie's value for `token`: derived from it (an HMAC), never the token itself. */
export function dashboardCookieValue(token: string): string {
  return createHmac('sha256', token).update('sluice-dashboard-cookie-v1').digest('base64url');
}

/** The `Set-Cookie` header that signs a browser in to the dashboard. */
export function dashboardCookie(token: string): string {
  return `${DASHBOARD_COOKIE}=${dashboardCookieValue(token)}; Path=${DASHBOARD_PATH}; HttpOnly; SameSite=Strict`;
}

/** The `token` query parameter of `url`, if it has one. */
export function queryToken(url: string): string | undefined {
  const query = url.indexOf('?');
  if (query < 0) return undefined;
  return new URLSearchParams(url.slice(query + 1)).get('token') ?? undefined;
}

function cookieOf(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * Whether a dashboard request carries the token in its query or the dashboard's cookie; `equal`
 * compares secrets in constant time (the security gate's).
 */
export function dashboardAuthorized(
  url: string,
  cookieHeader: string | undefined,
  token: string,
  equal: (given: string, expected: string) => boolean,
): boolean {
  const given = queryToken(url);
  if (given !== undefined && equal(given, token)) return true;
  const cookie = cookieOf(cookieHeader, DASHBOARD_COOKIE);
  return cookie !== undefined && equal(cookie, dashboardCookieValue(token));
}

const LOGIN_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sluice dashboard — sign in</title></head>
<body><h1>Sluice dashboard</h1><p>This daemon requires its bearer token.</p>
<form method="get" action="${DASHBOARD_PATH}"><label>Token <input type="password" name="token" autocomplete="current-password" required autofocus></label>
<button type="submit">Open</button></form></body></html>
`;

/** Answers a browser without credentials: 401 with a form that asks for the token. */
export function sendDashboardLogin(reply: FastifyReply): void {
  void reply
    .code(401)
    .header('WWW-Authenticate', 'Bearer')
    .header('Content-Security-Policy', "default-src 'none'; form-action 'self'; frame-ancestors 'none'")
    .header('Cache-Control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(LOGIN_PAGE);
}
