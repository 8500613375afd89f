import { CodedError } from '@sluice/protocol';
import type { FastifyReply } from 'fastify';
import * as z from 'zod/mini';
import type { BrowserCookie } from '../browser-cookie.js';
import { DASHBOARD_DOOR, WEB_DOOR, sendSignInForm, type SignInDoor } from '../browser-sign-in.js';
import { defineRoute, type Route, type RouteParts } from '../route.js';
import { ErrorBody } from '../schemas/common-schemas.js';

// A browser's sign-in (docs/decisions/032, 040): a form POST trades the token for an expiring
// cookie, sign-out drops it, and an operator's revoke invalidates every cookie issued. One
// factory for every door: the dashboard's and the web client's.

/** A 303 back to the door's page, setting `cookie` when given. */
function toPage(reply: FastifyReply, door: SignInDoor, cookie: string | undefined): FastifyReply {
  if (cookie !== undefined) void reply.header('Set-Cookie', cookie);
  return reply.code(303).header('Cache-Control', 'no-store').header('Location', door.page).send();
}

const html = (description: string) => ({ description, schema: z.string(), contentType: 'text/html' });

/** One door's routes: the door, its cookie among the server's parts, and when they are served. */
interface DoorRoutes {
  door: SignInDoor;
  cookieOf(parts: RouteParts): BrowserCookie | undefined;
  /** The dashboard's with the counters, the web client's with `--web`. */
  served: { metrics: true } | { web: true };
}

/** What every route of a door shares: `POST`, the operations tag, when it is served. */
const post = ({ served }: DoorRoutes, path: string) => ({
  method: 'POST' as const,
  path,
  tag: 'operations' as const,
  ...served,
});

function signIn(routes: DoorRoutes) {
  const { door, cookieOf } = routes;
  return defineRoute(
    {
      ...post(routes, door.signIn),
      summary: `Signs a browser in to ${door.page} with the daemon's token`,
      description: `The sign-in form's target: the token as the form field \`token\` (\`application/x-www-form-urlencoded\`, never in a URL). A right token answers \`303\` to \`${door.page}\` with the cookie \`${door.cookie}\` (\`HttpOnly; SameSite=Strict; Path=${door.cookiePath}; Max-Age=43200\`): signed with a key derived from the token and drawn at start, it expires after 12 hours and stops working on a restart, a new token or \`POST ${door.revoke}\`. The Origin gate applies (a same-origin form sends it).`,
      body: {
        schema: z.object({ token: z.string() }),
        required: true,
        contentType: 'application/x-www-form-urlencoded',
        example: { token: 'the daemon token' },
      },
      responses: {
        303: { description: `Signed in: the cookie is set; go to \`${door.page}\`.` },
        401: html('The sign-in form again, saying the token was wrong.'),
        415: { description: '`unsupported_media_type`: the body is not a form.', schema: ErrorBody },
      },
    },
    {
      formBody: true,
      handler: (parts) => (request, reply) => {
        if (!(request.body instanceof URLSearchParams))
          throw new CodedError(
            'unsupported_media_type',
            'Sign in with a form: Content-Type application/x-www-form-urlencoded and the field `token`',
          );
        const cookie = cookieOf(parts);
        // An open daemon has nothing to check: the page is open.
        if (cookie === undefined) return toPage(reply, door, undefined);
        const issued = cookie.signIn(request.body.get('token') ?? '');
        if (issued === undefined) return sendSignInForm(reply, door, 'wrong');
        return toPage(reply, door, issued);
      },
    },
  );
}

function signOut(routes: DoorRoutes) {
  const { door, cookieOf } = routes;
  return defineRoute(
    {
      ...post(routes, door.signOut),
      summary: `Signs a browser out of ${door.page}: drops its cookie`,
      description: `Needs no credentials: it only tells the browser to drop \`${door.cookie}\`. To make cookies already issued fail everywhere, \`POST ${door.revoke}\`.`,
      body: {
        schema: z.object({}),
        required: false,
        contentType: 'application/x-www-form-urlencoded',
        example: {},
      },
      responses: { 303: { description: `Signed out: the cookie is cleared; go to \`${door.page}\`.` } },
    },
    {
      formBody: true,
      handler: (parts) => (_request, reply) => toPage(reply, door, cookieOf(parts)?.clear()),
    },
  );
}

function revoke(routes: DoorRoutes) {
  const { door, cookieOf } = routes;
  return defineRoute(
    {
      ...post(routes, door.revoke),
      summary: `Invalidates every \`${door.cookie}\` cookie issued so far`,
      description: `Bearer token only (a cookie does not open it): draws a new signing key, so every browser signed in to \`${door.page}\` must sign in again. On a daemon without a token there are no cookies and nothing changes.`,
      responses: {
        204: { description: 'Revoked.' },
        401: {
          description: 'Without the bearer token (a cookie does not count).',
          schema: ErrorBody,
          example: { error: 'Unauthorized' },
        },
      },
    },
    {
      handler: (parts) => (_request, reply) => {
        cookieOf(parts)?.revoke();
        return reply.code(204).send();
      },
    },
  );
}

/** A door's `POST` sign-in, sign-out and revoke routes. */
function signInRoutes(routes: DoorRoutes): readonly Route[] {
  return [signIn(routes), signOut(routes), revoke(routes)];
}

/** `POST /dashboard/sign-in`, `/dashboard/sign-out` and `/dashboard/revoke`. */
export const DASHBOARD_SIGN_IN_ROUTES = signInRoutes({
  door: DASHBOARD_DOOR,
  cookieOf: (parts) => parts.dashboardCookie,
  served: { metrics: true },
});

/** `POST /web/sign-in`, `/web/sign-out` and `/web/revoke`. */
export const WEB_SIGN_IN_ROUTES = signInRoutes({
  door: WEB_DOOR,
  cookieOf: (parts) => parts.webCookie,
  served: { web: true },
});
