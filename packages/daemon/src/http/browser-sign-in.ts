import { CodedError } from '@sluice/protocol';
import type { FastifyReply } from 'fastify';
import { BrowserCookie } from './browser-cookie.js';

// How a browser signs in when the daemon has a token (docs/decisions/032, 040): an EventSource
// cannot send an Authorization header, and a person should not paste a token into every
// request. A sign-in form POSTs the token to the door's sign-in route, which answers a 303 to the
// door's page with a signed, expiring cookie (http/browser-cookie.ts). A token is never taken
// from a URL: `?token=` on a door's pages is a 400. Two doors share these rules: the operator's
// dashboard (`/dashboard`, its cookie scoped to it) and the web client (`/`, its cookie opening
// the API, docs/web.md).

/** One browser entrance: its page, its sign-in routes and its cookie's name and scope. */
export interface SignInDoor {
  /** What the sign-in page's title and heading say. */
  readonly title: string;
  /** The page a browser opens; without credentials it answers the sign-in form. */
  readonly page: string;
  /** Where the form posts the token (`application/x-www-form-urlencoded`, field `token`). */
  readonly signIn: string;
  /** Where a browser posts to drop its cookie. */
  readonly signOut: string;
  /** Where an operator (bearer token only) posts to invalidate every issued cookie. */
  readonly revoke: string;
  /** The cookie that carries the credential. */
  readonly cookie: string;
  /** The cookie's `Path`: the routes the cookie opens. */
  readonly cookiePath: string;
  /** Whether `path` (no query) is one of the door's own pages (`?token=` is refused there). */
  owns(path: string): boolean;
}

/** The operator's dashboard: its cookie opens the dashboard's routes only. */
export const DASHBOARD_DOOR: SignInDoor = {
  title: 'Sluice dashboard',
  page: '/dashboard',
  signIn: '/dashboard/sign-in',
  signOut: '/dashboard/sign-out',
  revoke: '/dashboard/revoke',
  cookie: 'sluice_dashboard',
  cookiePath: '/dashboard',
  owns: (path) => path === '/dashboard' || path.startsWith('/dashboard/'),
};

/** The web client for people (`/`): its cookie opens the API, mutations with a same-origin Origin. */
export const WEB_DOOR: SignInDoor = {
  title: 'Sluice',
  page: '/',
  signIn: '/web/sign-in',
  signOut: '/web/sign-out',
  revoke: '/web/revoke',
  cookie: 'sluice_web',
  cookiePath: '/',
  owns: (path) => path === '/' || path.startsWith('/web/'),
};

/** The door's cookie for a daemon with `token`; `now` is the wall clock (tests inject one). */
export function doorCookie(
  door: SignInDoor,
  token: string,
  options: { secure: boolean; now?: (() => number) | undefined },
): BrowserCookie {
  // `Secure` when the daemon serves HTTPS (docs/decisions/034): the browser then sends it over TLS only.
  return new BrowserCookie({ name: door.cookie, path: door.cookiePath, token, ...options });
}

/** Whether the query of `url` has a `token` parameter (its value is never read). */
export function hasQueryToken(url: string): boolean {
  const query = url.indexOf('?');
  return query >= 0 && new URLSearchParams(url.slice(query + 1)).has('token');
}

/** The refusal of a token in a page's URL; the message never repeats the URL. */
export function tokenInUrlError(door: SignInDoor): CodedError<'token_in_url'> {
  return new CodedError(
    'token_in_url',
    `${door.title} takes no token in its URL (it would stay in history and logs): sign in with the form, which POSTs it to ${door.signIn}, or send Authorization: Bearer`,
  );
}

/** The refusal of a cookie-authenticated change without this daemon's own Origin (CSRF). */
export function crossSiteError(): CodedError<'cross_site_request'> {
  return new CodedError(
    'cross_site_request',
    "A request authenticated by a browser cookie that changes something must carry this daemon's own Origin header; send Authorization: Bearer from other clients",
  );
}

/**
 * What the security gate does with a request that has no valid bearer token, for one door:
 * `pass` (sign-in and sign-out check nothing the gate knows), `cookie` (a valid cookie: the
 * gate still checks the Origin of a change), `sign-in` (the form) or `deny`. Revoking takes the
 * bearer token only.
 */
export function doorAccess(
  door: SignInDoor,
  method: string,
  path: string,
  cookieHeader: string | undefined,
  cookie: BrowserCookie,
): 'pass' | 'cookie' | 'sign-in' | 'deny' {
  if (method === 'POST' && (path === door.signIn || path === door.signOut)) return 'pass';
  if (path === door.revoke || path === DASHBOARD_DOOR.revoke) return 'deny';
  const scoped =
    door.cookiePath === '/' || path === door.cookiePath || path.startsWith(`${door.cookiePath}/`);
  if (scoped && cookie.verify(cookieHeader)) return 'cookie';
  return path === door.page && method === 'GET' ? 'sign-in' : 'deny';
}

const signInPage = (door: SignInDoor, message: string): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${door.title} — sign in</title></head>
<body><main><h1>${door.title}</h1><p role="status">${message}</p>
<form method="post" action="${door.signIn}"><label>Token <input type="password" name="token" autocomplete="current-password" required autofocus></label>
<button type="submit">Sign in</button></form></main></body></html>
`;

/** What the sign-in page says: asked for the token, or told it was wrong. */
export const SIGN_IN_MESSAGES = {
  ask: 'This daemon requires its bearer token.',
  wrong: 'That is not this daemon’s token. Check it and sign in again.',
} as const;

/** Answers a browser without credentials: 401 with the form that POSTs the token. */
export function sendSignInForm(
  reply: FastifyReply,
  door: SignInDoor,
  message: keyof typeof SIGN_IN_MESSAGES = 'ask',
): void {
  void reply
    .code(401)
    .header('WWW-Authenticate', 'Bearer')
    .header('Content-Security-Policy', "default-src 'none'; form-action 'self'; frame-ancestors 'none'")
    .header('Cache-Control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(signInPage(door, SIGN_IN_MESSAGES[message]));
}
