import { CodedError } from '@sluice/protocol';
import type { FastifyReply } from 'fastify';
import * as z from 'zod/mini';
import { ErrorBody } from '../schemas/common-schemas.js';
import {
  DASHBOARD_PATH,
  DASHBOARD_REVOKE_PATH,
  DASHBOARD_SIGN_IN_PATH,
  DASHBOARD_SIGN_OUT_PATH,
  sendDashboardLogin,
} from '../dashboard-auth.js';
import { defineRoute, type Route } from '../route.js';

// The dashboard's browser sign-in (docs/decisions/032): a form POST trades the token for an
// expiring cookie, sign-out drops it, and an operator's revoke invalidates every cookie issued.

/** A 303 back to the page, setting `cookie` when given. */
function toDashboard(reply: FastifyReply, cookie: string | undefined): FastifyReply {
  if (cookie !== undefined) void reply.header('Set-Cookie', cookie);
  return reply.code(303).header('Cache-Control', 'no-store').header('Location', DASHBOARD_PATH).send();
}

const html = (description: string) => ({ description, schema: z.string(), contentType: 'text/html' });

const signIn = defineRoute(
  {
    method: 'POST',
    path: DASHBOARD_SIGN_IN_PATH,
    tag: 'operations',
    summary: "Signs a browser in to the dashboard with the daemon's token",
    description:
      "The sign-in form's target: the token as the form field `token` (`application/x-www-form-urlencoded`, never in a URL). A right token answers `303` to `/dashboard` with the cookie `sluice_dashboard` (`HttpOnly; SameSite=Strict; Path=/dashboard; Max-Age=43200`): signed with a key derived from the token and drawn at start, it expires after 12 hours and stops working on a restart, a new token or `POST /dashboard/revoke`. The Origin gate applies (a same-origin form sends it).",
    body: {
      schema: z.object({ token: z.string() }),
      required: true,
      contentType: 'application/x-www-form-urlencoded',
      example: { token: 'the daemon token' },
    },
    metrics: true,
    responses: {
      303: { description: 'Signed in: the cookie is set; go to `/dashboard`.' },
      401: html('The sign-in form again, saying the token was wrong.'),
      415: { description: '`unsupported_media_type`: the body is not a form.', schema: ErrorBody },
    },
  },
  {
    formBody: true,
    handler:
      ({ dashboardCookie }) =>
      (request, reply) => {
        if (!(request.body instanceof URLSearchParams))
          throw new CodedError(
            'unsupported_media_type',
            'Sign in with a form: Content-Type application/x-www-form-urlencoded and the field `token`',
          );
        // An open daemon has nothing to check: the page is open.
        if (dashboardCookie === undefined) return toDashboard(reply, undefined);
        const cookie = dashboardCookie.signIn(request.body.get('token') ?? '');
        if (cookie === undefined) return sendDashboardLogin(reply, 'wrong');
        return toDashboard(reply, cookie);
      },
  },
);

const signOut = defineRoute(
  {
    method: 'POST',
    path: DASHBOARD_SIGN_OUT_PATH,
    tag: 'operations',
    summary: 'Signs a browser out of the dashboard: drops its cookie',
    description:
      'Needs no credentials: it only tells the browser to drop `sluice_dashboard`. To make cookies already issued fail everywhere, `POST /dashboard/revoke`.',
    metrics: true,
    body: {
      schema: z.object({}),
      required: false,
      contentType: 'application/x-www-form-urlencoded',
      example: {},
    },
    responses: { 303: { description: 'Signed out: the cookie is cleared; go to `/dashboard`.' } },
  },
  {
    formBody: true,
    handler:
      ({ dashboardCookie }) =>
      (_request, reply) =>
        toDashboard(reply, dashboardCookie?.clear()),
  },
);

const revoke = defineRoute(
  {
    method: 'POST',
    path: DASHBOARD_REVOKE_PATH,
    tag: 'operations',
    summary: 'Invalidates every dashboard cookie issued so far',
    description:
      'Bearer token only (a cookie does not open it): draws a new signing key, so every browser signed in to the dashboard must sign in again. On a daemon without a token there are no cookies and nothing changes.',
    metrics: true,
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
    handler:
      ({ dashboardCookie }) =>
      (_request, reply) => {
        dashboardCookie?.revoke();
        return reply.code(204).send();
      },
  },
);

/** `POST /dashboard/sign-in`, `/dashboard/sign-out` and `/dashboard/revoke`. */
export const DASHBOARD_SIGN_IN_ROUTES: readonly Route[] = [signIn, signOut, revoke];
